// The LIVE_* settings as config.ts reads them: defaults owned by live/hub.ts, seconds converted, every
// bad value reported at once.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LIVE_DEFAULTS } from '../../src/live/hub.js';

describe('LIVE_* configuration', () => {
  it('defaults to the hub’s own defaults, and converts seconds', () => {
    expect(loadConfig({}).live).toEqual(LIVE_DEFAULTS);
    expect(LIVE_DEFAULTS).toMatchObject({ intervalMs: 15_000, callsPerMinute: 30, maxLifetimeMs: 3_600_000 });
    const live = loadConfig({
      LIVE_INTERVAL_S: '5',
      LIVE_CALLS_PER_MIN: '50',
      LIVE_MAX_LIFETIME_S: '60',
      LIVE_MAX_STREAMS: '10',
      LIVE_MAX_STREAMS_PER_KEY: '2',
    }).live;
    expect(live).toEqual({ intervalMs: 5_000, callsPerMinute: 50, maxLifetimeMs: 60_000, maxStreams: 10, maxStreamsPerKey: 2 });
  });

  it('refuses an interval under 0.1 s and every other bad value, all at once', () => {
    const load = () => loadConfig({ LIVE_INTERVAL_S: '0', LIVE_CALLS_PER_MIN: 'many', LIVE_MAX_STREAMS: '-1' });
    expect(load).toThrow(/LIVE_INTERVAL_S must be a number of seconds from 0.1 to 86400 \(at most 3 decimals\), got "0"/);
    expect(load).toThrow(/LIVE_CALLS_PER_MIN must be an integer/);
    expect(load).toThrow(/LIVE_MAX_STREAMS must be an integer/);
  });
});
