// A short run of the stored pass (bench/stored.ts), so that it never rots: the repeated dashboard sent
// as a stored answer, against a static server of its bytes, and through a second gateway on one Redis
// when redis-server is there. It spawns dist/sandbox/main.js and dist/main.js: `npm test` builds them first.
import { describe, expect, it } from 'vitest';
import { formatReport, runBench, storedPass } from '../../bench/index.js';
import { pathIfPresent } from '../needs.js';
import { BUSY_RUN, expectEveryProcessEnded, twoRounds } from './short.js';

describe('benchmark harness: the stored pass', () => {
  expectEveryProcessEnded();

  it('runs the stored pass short: the repeated dashboard sent stored, a previous build, a static server of its bytes, gateway B on Redis', async () => {
    expect(storedPass([])).toEqual({ stored: null });
    expect(storedPass(['stored'], { repeat: 1 })).toStrictEqual({
      stored: { latencyMs: 0, connections: 20, rounds: 3, redisServer: 'redis-server' },
    });
    // Without redis-server (outside CI), the pass measures no gateway on Redis. The "previous build" is this
    // build itself (dist/main.js), stored and sent as the gateway is.
    const redisServer = pathIfPresent('redis-server') === null ? null : 'redis-server';
    const report = await runBench({
      ...BUSY_RUN,
      repeat: 1,
      baselines: false,
      passes: [],
      stored: { ...twoRounds(storedPass(['stored'], { connections: 4, redisServer }).stored), previousScript: 'dist/main.js' },
    });
    const stored = report.stored;
    expect(stored?.notes).toEqual([]);
    expect(stored?.fillCalls).toBe(7);
    expect(stored?.secondCalls).toBe(0);
    expect(stored?.bytes).toBeGreaterThan(500);
    const rows = [stored?.stored, stored?.previous, stored?.static, ...(redisServer ? [stored?.shared] : [])];
    for (const row of rows) {
      expect(row?.runs).toHaveLength(2);
      expect(row?.errors).toBe(0);
      for (const figure of [row?.requestsPerSecond, row?.cpuMsPerRequest, row?.p50]) {
        expect(Number.isFinite(figure)).toBe(true);
        expect(figure).toBeGreaterThan(0);
      }
    }
    // Sent stored: nothing reaches the install (a run is far shorter than any lifetime).
    expect(stored?.stored.upstreamCalls).toBe(0);
    expect(stored?.static.upstreamCalls).toBe(0);
    // The previous build's calls are a figure of the pass (its second dashboard's are checked in notes above).
    expect(stored?.previous?.upstreamCalls).toBeGreaterThanOrEqual(0);
    // Gateway B reads them from Redis; one that Redis answers later than the store timeout (a busy machine)
    // is read upstream instead: a figure of the pass, not checked here.
    if (redisServer) expect(stored?.shared?.upstreamCalls).toBeGreaterThanOrEqual(0);
    for (const ratio of [stored?.cpuRatio, stored?.requestsPerSecondRatio, stored?.previousCpuRatio])
      expect(Number.isFinite(ratio)).toBe(true);

    const markdown = formatReport(report);
    expect(markdown).toContain(
      '## Pass "stored": the repeated dashboard against a static server of its bytes, 0 ms sandbox latency, 4 connections',
    );
    expect(markdown).toMatch(/\| gateway, stored answer \(CACHE=on\) \| \d+ \| [\d.]+ \| [\d.]+ \| 0 \| \d+, \d+ \| [\d.]+, [\d.]+ \|/);
    expect(markdown).toMatch(/\| static server \| \d+ \| [\d.]+ \| [\d.]+ \| 0 \|/);
    if (redisServer) expect(markdown).toMatch(/\| gateway B, stored answer in Redis \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \|/);
    expect(markdown).toMatch(
      /Stored answer ÷ static server: CPU ms\/req \d+\.\d\d \(target ≤ 1\.25: (met|not met)\); req\/s \d+\.\d\d \(information, no target\)\./,
    );
    expect(markdown).toMatch(
      /\| stored answer CPU ms\/req ÷ static server CPU ms\/req ≤ 1\.25 .* \| \d+\.\d\d \([\d.]+ ÷ [\d.]+\) \| [✓✗] \|/,
    );
    expect(markdown).toMatch(/\| the previous build, stored answer \| \d+ \| [\d.]+ \| [\d.]+ \| 0 \|/);
    expect(markdown).toMatch(/This build ÷ the previous build, stored answer: CPU ms\/req \d+\.\d\d; the previous build ÷ static server/);
    // The req/s ratio is information, not a target.
    expect(markdown.slice(markdown.indexOf('## Targets'))).not.toContain('static server req/s');
  }, 60_000);

  it("with the request log silenced, tells the answer was stored from the gateway's metrics instead", async () => {
    // One round: the alternation is the test above's.
    const report = await runBench({
      ...BUSY_RUN,
      repeat: 1,
      baselines: false,
      passes: [],
      gatewayEnv: { LOG_LEVEL: 'silent' },
      stored: { ...twoRounds(storedPass(['stored'], { connections: 4, redisServer: null }).stored), rounds: 1 },
    });
    const stored = report.stored;
    // No note: the metrics said the answers were stored, and the second dashboards were sent from them.
    expect(stored?.notes).toEqual([]);
    expect(stored?.stored.runs).toHaveLength(1);
    for (const calls of [stored?.secondCalls, stored?.stored.upstreamCalls]) {
      expect(Number.isFinite(calls)).toBe(true);
      expect(calls).toBeGreaterThanOrEqual(0);
    }
    for (const figure of [stored?.stored.requestsPerSecond, stored?.stored.cpuMsPerRequest, stored?.cpuRatio]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }
  }, 60_000);
});
