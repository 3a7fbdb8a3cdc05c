// A short run of bench/upstream-side.ts, so that it never rots: every layer and pool setting reads the
// dashboard from a sandbox process, and the figures come out. It spawns dist/sandbox/main.js: `npm test`
// builds it first.
import { describe, expect, it } from 'vitest';
import { UPSTREAM_SIDE_DEFAULTS, formatUpstreamSide, runUpstreamSide } from '../../bench/upstream-side.js';
import { expectEveryProcessEnded } from './short.js';

/** This process's open TCP sockets and the like (the run's pools must have closed theirs). */
const openSockets = (): number => process.getActiveResourcesInfo().filter((kind) => kind.startsWith('TCP')).length;

describe('benchmark: the upstream side', () => {
  expectEveryProcessEnded();

  it('measures each layer (over sockets, in memory) and pool setting for a fraction of a second, with finite figures, and leaves nothing open', async () => {
    const socketsBefore = openSockets();
    // Without a full collection before each of its 72 measurements: in vitest's worker (its heap holds
    // vitest and the modules of the run) they were half this test's CPU; `npm run bench` keeps them.
    expect(UPSTREAM_SIDE_DEFAULTS.collect).toBe(true);
    const report = await runUpstreamSide({
      rounds: 2,
      dashboards: 3,
      warmup: 1,
      memory: true,
      settings: true,
      collect: false,
      log: () => undefined,
    });
    expect(report.options.collect).toBe(false);

    const names = ['floor', 'client', 'decoded', 'source', 'built'];
    expect(report.layers.map((f) => f.name)).toEqual(names);
    expect(report.memory.map((f) => f.name)).toEqual(names);
    // Each setting for the floor and the client.
    expect(report.settings).toHaveLength(14);
    for (const figure of [...report.layers, ...report.memory, ...report.settings]) {
      expect(figure.runs).toHaveLength(2);
      for (const value of [figure.cpuUs, figure.ratio, figure.perSecond, ...figure.runs]) {
        expect(Number.isFinite(value)).toBe(true);
        expect(value).toBeGreaterThan(0);
      }
    }
    expect(report.layers[0]?.ratio).toBe(1);
    expect(report.memory[0]?.ratio).toBe(1);
    for (const load of report.loadAverage) expect(Number.isFinite(load)).toBe(true);

    const markdown = formatUpstreamSide(report);
    expect(markdown).toContain('| layer, over sockets (the sandbox) | µs CPU / dashboard | ÷ floor | dashboards/s (one at a time) |');
    expect(markdown).toContain('| layer, over an upstream in memory (no sockets; 12 dashboards a round) |');
    expect(markdown).toMatch(/\| floor: the floor's REST: request\(\) \+ body\.json\(\) \| [\d,]+ \| 1\.00 \| [\d,]+ \|/);
    expect(markdown).toMatch(/\| built: source \+ schema\/stat\.ts stat lists \| [\d,]+ \| \d+\.\d\d \| [\d,]+ \|/);
    expect(markdown).toMatch(/\| client, 128 connections, pipelining 10 \| [\d,]+ \| \d+\.\d\d \| [\d,]+ \|/);
    expect(markdown).not.toContain('n/a');

    // The pools and clients were closed and the sandbox stopped (expectEveryProcessEnded checks it is gone).
    await expect.poll(openSockets).toBeLessThanOrEqual(socketsBefore);
  }, 60_000);
});
