// A short run of the hand-written aggregator (bench/aggregator.ts) in the floor pass, and of the wave count
// of a scenario pass (bench/waves.ts), so that they never rot: the figures come out finite and of the right
// sign, never their size. It spawns dist/sandbox/main.js, dist/main.js and dist-bench/bench/aggregator.js:
// `npm test` builds them first.
import { describe, expect, it } from 'vitest';
import { floorPass, formatReport, runBench } from '../../bench/index.js';
import { countWaves } from '../../bench/waves.js';
import { RUN, expectEveryProcessEnded, twoRounds } from './short.js';

describe('benchmark harness: the aggregator and the waves', () => {
  expectEveryProcessEnded();

  it('counts waves as chains of calls, each starting after the one before it ended', () => {
    expect(countWaves([])).toBe(0);
    // Three together, overlapping: one wave.
    expect(
      countWaves([
        { startedAt: 0, endedAt: 20 },
        { startedAt: 1, endedAt: 21 },
        { startedAt: 2, endedAt: null },
      ]),
    ).toBe(1);
    // A call after the first ended, and one after that: three, in whatever order the log holds them.
    expect(
      countWaves([
        { startedAt: 45, endedAt: 60 },
        { startedAt: 0, endedAt: 20 },
        { startedAt: 21, endedAt: 40 },
        { startedAt: 22, endedAt: 41 },
      ]),
    ).toBe(3);
  });

  it('measures the aggregator beside the gateway, and the waves of the rich dashboard', async () => {
    const report = await runBench({
      ...RUN,
      repeat: 1,
      baselines: false,
      passes: [{ name: 'tiny', latencyMs: 20, connections: 2, scenarios: ['dashboard-rich'] }],
      floor: twoRounds(floorPass(['floor'], { hiveGateway: false }).floor),
    });
    const rich = report.passes[0]?.results[0];
    expect(rich?.scenario).toBe('dashboard-rich');
    expect(rich?.gateway.errors).toBe(0);
    // Counted, never its number here: a busy machine may stagger the calls' arrivals (test/schema/prefetch.waves.test.ts counts it).
    expect(rich?.waves).toBeGreaterThanOrEqual(1);

    const aggregator = report.floor?.aggregator;
    expect(report.floor?.notes).toEqual([]);
    expect(aggregator?.sameData).toBe(true);
    expect(aggregator?.checkCalls).toBe(7);
    expect(aggregator?.runs).toHaveLength(2);
    expect(aggregator?.measurement.errors).toBe(0);
    for (const figure of [
      aggregator?.measurement.requestsPerSecond,
      aggregator?.measurement.cpuMsPerRequest,
      aggregator?.gatewayCpuRatio,
      aggregator?.gatewayRequestsPerSecondRatio,
    ]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }

    const markdown = formatReport(report);
    expect(markdown).toMatch(/\| aggregator \(by hand, no GraphQL\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \|/);
    expect(markdown).toMatch(/Gateway ÷ aggregator: CPU ms\/req \d+\.\d\d \(target ≤ 1\.3: (met|not met)\); req\/s \d+\.\d\d\./);
    expect(markdown).toMatch(
      /\| gateway CPU ms\/req ÷ hand-written aggregator CPU ms\/req ≤ 1\.3 .* \| \d+\.\d\d \([\d.]+ ÷ [\d.]+\) \| [✓✗] \|/,
    );
    expect(markdown).toContain(
      `${rich?.waves} wave${rich?.waves === 1 ? '' : 's'} of upstream calls (one request from a known key, in the sandbox's log)`,
    );
  }, 60_000);
});
