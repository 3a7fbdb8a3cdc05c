// A short run of the floor pass, so that it never rots: the gateway (its request log on), a previous build,
// the minimal floor gateway (bench/floor-gateway.ts) on the same stack, the hand-written aggregator
// (bench/aggregator.ts) and Hive Gateway over an OpenAPI source (bench/hive-gateway.ts), alternately; and
// the wave count of a scenario pass (bench/waves.ts), in the same run: one sandbox and one set of processes
// for both, as starting them is most of a smoke run's time. It spawns dist/sandbox/main.js, dist/main.js,
// dist-bench/bench/aggregator.js and dist-bench/bench/hive-compose.js: `npm test` builds them first.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BenchReport, floorPass, formatReport, runBench } from '../../bench/index.js';
import { countWaves } from '../../bench/waves.js';
import { BUSY_RUN, expectCalls, expectEveryProcessEnded, twoRounds } from './short.js';

/** What the previous build's node (a wrapper of this one) was run with, read once the run is over. */
interface FloorRun {
  report: BenchReport;
  previousNodeCalls: string;
}

/**
 * One run for both tests: a scenario pass of the rich dashboard (its waves), then the floor pass with a
 * previous build under another node binary, its aggregator and Hive Gateway.
 */
let floorRun: Promise<FloorRun> | undefined;
const runFloorPass = (): Promise<FloorRun> => {
  floorRun ??= (async () => {
    // The "previous build" is this build itself (dist/main.js): same data, same calls, ratios near 1. It
    // runs under another node binary (--previous-node): here a wrapper of this one that logs its arguments.
    const wrapperDir = mkdtempSync(join(tmpdir(), 'previous-node-'));
    const wrapper = join(wrapperDir, 'node');
    writeFileSync(wrapper, `#!/bin/sh\necho "$@" >> "${wrapperDir}/calls"\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
    try {
      const report = await runBench({
        ...BUSY_RUN,
        repeat: 1,
        baselines: false,
        passes: [{ name: 'tiny', latencyMs: 5, connections: 2, scenarios: ['dashboard-rich'] }],
        // Two rounds: the runs alternate and their medians are taken all the same.
        floor: twoRounds(floorPass(['floor'], { previousScript: 'dist/main.js' }).floor),
        previousNode: wrapper,
      });
      return { report, previousNodeCalls: readFileSync(join(wrapperDir, 'calls'), 'utf8') };
    } finally {
      rmSync(wrapperDir, { recursive: true, force: true });
    }
  })();
  return floorRun;
};

/** The report as a run of the floor pass alone would have it: without the scenario pass run beside it. */
const floorAlone = (report: BenchReport): BenchReport => ({ ...report, passes: [] });

describe('benchmark harness: the floor pass', () => {
  expectEveryProcessEnded();

  it('runs the floor pass short: the gateway, a previous build, the floor gateway and Hive Gateway alternately, with their ratios', async () => {
    // Off by default; named, it runs at 0 ms and 20 connections, at least 3 runs each, Hive Gateway too; no previous build unless given.
    expect(floorPass([])).toEqual({ floor: null });
    expect(floorPass(['floor'], { repeat: 1 })).toStrictEqual({ floor: { latencyMs: 0, connections: 20, rounds: 3, hiveGateway: true } });
    expect(floorPass(['floor'], { hiveGateway: false }).floor?.hiveGateway).toBe(false);
    expect(floorPass(['floor'], { repeat: 5 }).floor?.rounds).toBe(5);
    expect(floorPass(['floor'], { connections: 8 }).floor?.connections).toBe(8);
    expect(floorPass(['floor'], { previousScript: 'dist/main.js' }).floor?.previousScript).toBe('dist/main.js');

    const { report: run, previousNodeCalls: calls } = await runFloorPass();
    const report = floorAlone(run);
    expect(calls).toContain('--version');
    expect(calls).toMatch(/dist\/main\.js/);
    expect(report.previousNode).toBe(process.version);
    expect(formatReport(report)).toContain(`The previous build runs on Node ${process.version}; the gateway on ${process.version}.`);

    const floor = report.floor;
    expect(floor?.notes).toEqual([]);
    expect(floor?.sameData).toBe(true);
    expect(floor?.checkCalls).toEqual({ gateway: 7, floor: 7 });
    expect(floor?.runs.gateway).toHaveLength(2);
    expect(floor?.runs.floor).toHaveLength(2);
    const previous = floor?.previous;
    expect(previous?.sameData).toBe(true);
    expect(previous?.checkCalls).toBe(7);
    expect(previous?.runs).toHaveLength(2);
    expectCalls(floor?.gateway, 7);
    expectCalls(previous?.measurement, 7);
    // Hive Gateway over OpenAPI: the same seven reads, the same statistics rows as the gateway's.
    const hive = floor?.hive;
    expect(hive?.checkCalls).toBe(7);
    expect(hive?.sameData).toBe(true);
    expect(hive?.runs).toHaveLength(2);
    // The floor's and Hive Gateway's answers do not count their calls: at least the reads reach the sandbox.
    for (const m of [floor?.floor, hive?.measurement]) {
      expect(m?.reportedCallsPerRequest).toBeNull();
      expect(m?.upstreamCallsPerRequest).toBeGreaterThanOrEqual(7);
    }
    // The gateway runs with its request log on (the default LOG_LEVEL): lines on its stdout, read by the harness.
    expect(floor?.gateway.outputBytesPerRequest).toBeGreaterThan(0);
    expect(previous?.measurement.outputBytesPerRequest).toBeGreaterThan(0);
    for (const m of [floor?.gateway, floor?.floor, previous?.measurement, hive?.measurement]) {
      expect(m?.errors).toBe(0);
      for (const figure of [m?.requestsPerSecond, m?.cpuMsPerRequest]) {
        expect(Number.isFinite(figure)).toBe(true);
        expect(figure).toBeGreaterThan(0);
      }
    }
    const ratios = [
      previous?.requestsPerSecondRatio,
      previous?.cpuRatio,
      previous?.gatewayRequestsPerSecondRatio,
      previous?.gatewayCpuRatio,
    ];
    const hiveRatios = [hive?.hiveCpuRatio, hive?.gatewayRequestsPerSecondRatio, hive?.floorCpuRatio, hive?.floorRequestsPerSecondRatio];
    for (const ratio of [floor?.requestsPerSecondRatio, floor?.cpuRatio, ...ratios, ...hiveRatios]) {
      expect(Number.isFinite(ratio)).toBe(true);
      expect(ratio).toBeGreaterThan(0);
    }
    // In the JSON report too.
    const json = JSON.parse(JSON.stringify(report)) as typeof report;
    expect(json.floor?.previousScript).toBe('dist/main.js');
    expect(json.floor?.previous?.gatewayRequestsPerSecondRatio).toBe(previous?.gatewayRequestsPerSecondRatio);
    expect(json.floor?.previous?.runs).toHaveLength(2);
    expect(json.floor?.hive?.hiveCpuRatio).toBe(hive?.hiveCpuRatio);

    const markdown = formatReport(report);
    expect(markdown).toContain(
      '## Pass "floor": the gateway against a minimal gateway on the same stack and Hive Gateway over OpenAPI, 0 ms sandbox latency, 20 connections',
    );
    // The gateway wrote its request log (stdout bytes per request above 0); the floor writes nothing.
    expect(markdown).toMatch(
      /\| gateway \(CACHE=off\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| [1-9]\d* \|/,
    );
    expect(markdown).toMatch(/\| floor \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| 0 \|/);
    // The previous build, then Hive Gateway: their rows, their ratios, and this build against them.
    expect(markdown).toMatch(
      /\| floor \|.*\n\| previous \(dist\/main\.js\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| \d+ \| \d+, \d+ \| [\d.]+, [\d.]+ \|\n/,
    );
    expect(markdown).toMatch(
      /\| previous .*\n\| Hive Gateway \(OpenAPI\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| \d+ \| \d+, \d+ \| [\d.]+, [\d.]+ \|\n/,
    );
    expect(markdown).toContain(
      "measured last in each round with the same dashboard in its own schema: 7 upstream calls; the same website and statistics rows as the gateway's.",
    );
    expect(markdown).toMatch(
      /\nHive Gateway ÷ gateway: CPU ms\/req \d+\.\d\d \(target ≥ 4: (met|not met)\); gateway ÷ Hive Gateway: req\/s \d+\.\d\d \(target ≥ 4: (met|not met)\)\.\n/,
    );
    expect(markdown).toMatch(/\nHive Gateway ÷ floor: CPU ms\/req \d+\.\d\d; req\/s \d+\.\d\d\.\n/);
    expect(markdown).toContain(
      'All three answered the same data. One dashboard made 7 upstream calls through the gateway, 7 through the previous build, 7 through the floor.',
    );
    expect(markdown).toMatch(/\nPrevious ÷ floor: req\/s \d+\.\d\d; CPU ms\/req \d+\.\d\d\.\n/);
    expect(markdown).toMatch(
      /\nGateway ÷ previous \(this build against the previous one, same run\): req\/s \d+\.\d\d; CPU ms\/req \d+\.\d\d\.\n/,
    );
    // The ratios and their targets, printed whether met or not.
    expect(markdown).toMatch(
      /Gateway ÷ floor: req\/s \d+\.\d\d \(target ≥ 1\.3: (met|not met)\); CPU ms\/req \d+\.\d\d \(target ≤ 0\.7: (met|not met)\)\./,
    );
    expect(markdown).toMatch(/\| gateway req\/s ÷ floor req\/s ≥ 1\.3 .* \| \d+\.\d\d \(\d+ ÷ \d+\) \| [✓✗] \|/);
    expect(markdown).toMatch(/\| gateway CPU ms\/req ÷ floor CPU ms\/req ≤ 0\.7 .* \| \d+\.\d\d \([\d.]+ ÷ [\d.]+\) \| [✓✗] \|/);
    expect(markdown).toMatch(/\| Hive Gateway CPU ms\/req ÷ gateway CPU ms\/req ≥ 4 .* \| \d+\.\d\d \([\d.]+ ÷ [\d.]+\) \| [✓✗] \|/);
    expect(markdown).toMatch(/\| gateway req\/s ÷ Hive Gateway req\/s ≥ 4 .* \| \d+\.\d\d \(\d+ ÷ \d+\) \| [✓✗] \|/);
    // A run of the floor pass alone judges only its targets, and those stay about gateway ÷ floor.
    expect(markdown).not.toContain('dashboard p50 within upstream latency');
    expect(markdown.slice(markdown.indexOf('## Targets'))).not.toMatch(/previous/i);

    // Without a previous build, the section has no trace of one; without Hive Gateway, its targets are not measured.
    const {
      previous: _previous,
      previousScript: _script,
      hive: _hive,
      aggregator: _aggregator,
      ...withoutOthers
    } = floor ?? ({} as NonNullable<typeof floor>);
    const { previousNode: _node, ...withoutPreviousNode } = report;
    const plain = formatReport({ ...withoutPreviousNode, floor: withoutOthers });
    expect(plain).not.toMatch(/previous/i);
    expect(plain).toContain('Both answered the same data. One dashboard made 7 upstream calls through the gateway, 7 through the floor.');
    expect(plain).toMatch(/\| floor \|.*\|\n\nGateway ÷ floor: /);
    expect(plain).not.toContain('Hive Gateway ÷');
    expect(plain).toMatch(/\| gateway req\/s ÷ Hive Gateway req\/s ≥ 4 .* \| not measured \| – \|/);
  }, 60_000);

  it('measures the aggregator beside the gateway, and the waves of the rich dashboard', async () => {
    const { report } = await runFloorPass();
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
});
