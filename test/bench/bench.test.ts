// A tiny run of the passes of the benchmark harness (0.2-second runs), so it never rots (the floor, stored,
// scale and live passes: floor-gateway.test.ts, stored.test.ts, scale.test.ts, live.test.ts). It spawns
// dist/sandbox/main.js and dist/main.js: `npm test` builds them first. Each test starts several processes
// and runs a few seconds of load: 60 s leaves room for a busy CI machine (these are smoke tests of the
// harness, not timed ones).
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type BenchReport, cachingPasses, defaultPasses, formatReport, runBench } from '../../bench/index.js';
import { RUN, expectCalls, expectEveryProcessEnded } from './short.js';

/** The session pass's defaults, run short below. */
const { session: sessionDefaults } = cachingPasses(['cache', 'session'], { connections: 2 });

/**
 * One run for the first three tests, on one sandbox and one gateway (starting processes is most of a smoke
 * run's time): a scenario pass, the dashboard through the gateway, the previous build right after it (this
 * build itself, dist/main.js: the same calls, ratios near 1) and both REST baselines; then the read cache's
 * passes.
 */
let benchRun: Promise<BenchReport> | undefined;
const runScenarioAndCachePasses = (): Promise<BenchReport> => {
  benchRun ??= runBench({
    ...RUN,
    repeat: 1,
    passes: [{ name: 'tiny', latencyMs: 5, connections: 2, scenarios: ['dashboard'] }],
    previousScript: 'dist/main.js',
    cachePass: { latencyMs: 20, connections: [2] },
    // 5 users, one request every 0.125 s each for 0.5 s: 20 dashboards of 7 reads against 60 a minute.
    session: {
      ...(sessionDefaults ?? { users: 5, rateLimit: 60, latencyMs: 20 }),
      durationSeconds: 0.5,
      intervalSeconds: 0.125,
    },
  });
  return benchRun;
};

/** The report as a run of the scenario pass alone would have it: without the read cache's passes beside it. */
const scenarioAlone = ({ cache: _cache, session: _session, ...report }: BenchReport): BenchReport => report;

/** The report as a run of the read cache's passes alone would have it: without the scenario pass before them. */
const cachingAlone = ({ previousScript: _script, ...report }: BenchReport): BenchReport => ({ ...report, passes: [] });

describe('benchmark harness', () => {
  expectEveryProcessEnded();

  it('measures the dashboard through the gateway and both REST baselines, and prints its table', async () => {
    const report = scenarioAlone(await runScenarioAndCachePasses());

    expect(report.passes).toHaveLength(1);
    const result = report.passes[0]?.results[0];
    expect(result?.scenario).toBe('dashboard');
    expect(result?.notes).toEqual([]);
    expect(result?.sameCalls).toBe(true);
    const gateway = result?.gateway;
    console.log(`calls: ${JSON.stringify({ answersByCalls: gateway?.answersByCalls, retriedCalls: gateway?.retriedCalls })}`);
    expectCalls(gateway, 7);
    expect(gateway?.errors).toBe(0);
    for (const row of [gateway, result?.sequential, result?.parallel]) {
      for (const figure of [row?.requestsPerSecond, row?.p50, row?.p90, row?.p99, row?.upstreamCallsPerRequest]) {
        expect(Number.isFinite(figure)).toBe(true);
        expect(figure).toBeGreaterThan(0);
      }
    }
    for (const figure of [gateway?.cpuMsPerRequest, gateway?.peakRssMb, report.passes[0]?.gatewayPeakRssMb]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }

    const markdown = formatReport(report);
    expect(markdown).toContain('### 2. Dashboard: one website with six statistics');
    expect(markdown).toMatch(
      /\| gateway \(GraphQL\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| [\d.]+× \| [\d.]+× \|/,
    );
    expect(markdown).toContain(`| ${gateway?.upstreamCallsPerRequest.toFixed(2)} |`);
    // The target counts the calls the answers report (a retried read is not a call more), retries beside.
    const retried = gateway?.retriedCalls ? ` \\(\\+${gateway.retriedCalls} retried\\)` : '';
    expect(markdown).toMatch(
      new RegExp(
        `\\| upstream calls per request exactly the number of distinct REST reads \\(retries aside\\) \\| ` +
          `dashboard@tiny ${gateway?.reportedCallsPerRequest?.toFixed(2)}/7${retried} \\| ${gateway?.reportedCallsPerRequest === 7 ? '✓' : '✗'} \\|`,
      ),
    );
    expect(markdown).toContain('| REST, sequential |');
    expect(markdown).toContain('| REST, parallel |');
    expect(markdown).toContain('## Targets');
  }, 60_000);

  it('measures a previous build right after the gateway in a scenario pass: its row, its peak RSS, this build ÷ previous build', async () => {
    // The pass that measures it in `npm run bench -- --previous`, at 0 ms: the gateway's own cost.
    expect(defaultPasses({ passes: ['overhead'], scenarios: ['dashboard'] })).toEqual([
      { name: 'overhead', latencyMs: 0, connections: 1, scenarios: ['dashboard'] },
    ]);
    const report = scenarioAlone(await runScenarioAndCachePasses());

    expect(report.previousScript).toBe('dist/main.js');
    const pass = report.passes[0];
    const result = pass?.results[0];
    expect(result?.notes).toEqual([]);
    const previous = result?.previous;
    expect(previous?.notes).toEqual([]);
    expect(previous?.sameCalls).toBe(true);
    expect(previous?.measurement.errors).toBe(0);
    expectCalls(previous?.measurement, 7);
    const m = previous?.measurement;
    const ratios = previous?.ratios;
    for (const figure of [
      m?.requestsPerSecond,
      m?.p50,
      m?.cpuMsPerRequest,
      m?.peakRssMb,
      pass?.previousPeakRssMb,
      ratios?.requestsPerSecond,
      ratios?.p50,
      ratios?.cpuMsPerRequest,
    ]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }
    // In the JSON report too.
    const json = JSON.parse(JSON.stringify(report)) as typeof report;
    expect(json.previousScript).toBe('dist/main.js');
    expect(json.passes[0]?.previousPeakRssMb).toBe(pass?.previousPeakRssMb);
    expect(json.passes[0]?.results[0]?.previous?.ratios).toEqual(ratios);
    expect(json.passes[0]?.results[0]?.previous?.measurement.requests).toBe(previous?.measurement.requests);

    const markdown = formatReport(report);
    expect(markdown).toMatch(
      /\| gateway \(GraphQL\) \|[^\n]*\|\n\| previous build \(dist\/main\.js\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| [\d.]+× \| [\d.]+× \|\n\| REST, sequential \|/,
    );
    expect(markdown).toContain('the previous build made the same REST calls as the gateway');
    expect(markdown).toMatch(/\nGateway peak RSS so far \(VmHWM\) after this pass: [\d.]+ MB; previous build's: [\d.]+ MB\.\n/);
    expect(markdown).toMatch(
      /\nThis build ÷ previous build .*\n\n\| scenario \| req\/s \| p50 \| CPU ms\/req \|\n\|---\|---:\|---:\|---:\|\n\| 2\. dashboard \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|\n/,
    );
    // The targets stay about this build.
    expect(markdown.slice(markdown.indexOf('## Targets'))).not.toMatch(/previous/i);

    // Without a previous build, no trace of one.
    const { previousScript: _script, ...withoutPrevious } = report;
    const plain = formatReport({
      ...withoutPrevious,
      passes: report.passes.map(({ previousPeakRssMb: _peak, ...rest }) => ({
        ...rest,
        results: rest.results.map(({ previous: _previous, ...r }) => r),
      })),
    });
    expect(plain).not.toMatch(/previous/i);
    expect(plain).toMatch(/\nGateway peak RSS so far \(VmHWM\) after this pass: [\d.]+ MB\.\n\n## Targets/);
  }, 60_000);

  it('runs the read cache passes short: a warm dashboard reads nothing upstream, a session is throttled less with the cache', async () => {
    // The default run keeps its four passes; the cache passes run only when named.
    expect(defaultPasses().map((pass) => pass.name)).toEqual(['main', 'light', 'overhead', 'load']);
    expect(cachingPasses([])).toEqual({ cachePass: null, session: null, shared: null });
    const { cachePass } = cachingPasses(['cache', 'session'], { connections: 2 });
    expect(cachePass?.connections).toEqual([1, 2]);

    const report = cachingAlone(await runScenarioAndCachePasses());

    const cache = report.cache;
    expect(cache?.notes).toEqual([]);
    const cold = cache?.rows.find((row) => row.cache === 'off');
    const warm = cache?.rows.find((row) => row.cache === 'on');
    // The warm gateway's first request fills its cache: its 7 reads (a read tried again counted once); the next one none.
    expect(warm?.fillCalls).toBe(7);
    expect(warm?.secondCalls).toBe(0);
    expectCalls(cold?.measurement, 7);
    expect(warm?.upstreamCalls).toBe(0);
    expect(warm?.measurement.upstreamCallsPerRequest).toBe(0);
    expect(warm?.measurement.errors).toBe(0);
    expect(warm?.measurement.requests).toBeGreaterThan(0);
    for (const figure of [cold?.measurement.p50, warm?.measurement.p50, warm?.measurement.requestsPerSecond]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }

    const off = report.session?.runs.find((run) => run.cache === 'off');
    const on = report.session?.runs.find((run) => run.cache === 'on');
    expect(off?.requests).toBe(20);
    expect(on?.requests).toBe(20);
    for (const run of [off, on]) expect((run?.complete ?? 0) + (run?.rateLimited ?? 0) + (run?.otherErrors ?? 0)).toBe(run?.requests);
    expect(off?.rateLimited).toBeGreaterThan(0);
    expect(off?.upstream429).toBeGreaterThan(0);
    expect(on?.rateLimited).toBeLessThan(off?.rateLimited ?? 0);
    expect(on?.upstreamCalls).toBeLessThan(off?.upstreamCalls ?? 0);
    expect(on?.complete).toBeGreaterThan(off?.complete ?? 0);

    const markdown = formatReport(report);
    expect(markdown).toContain('## Pass "cache": the dashboard with a warm read cache, 20 ms sandbox latency');
    expect(markdown).toMatch(/\| CACHE=off \(cold\) \| 2 \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| \d+ \| [\d.]+ \| 1\.00× \|/);
    expect(markdown).toMatch(/\| CACHE=on \(warm\) \| 2 \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 0\.00 \| 0 \| [\d.]+ \| [\d.]+× \|/);
    expect(markdown).toContain('## Pass "session": 5 users on one key, sandbox limited to 60 requests a minute per key');
    expect(markdown).toMatch(/\| CACHE=off \| 20 \| \d+ \| [1-9]\d* \(\d+\) \|/);
    expect(markdown).toMatch(/\| CACHE=on \| 20 \| \d+ \| \d+ \(\d+\) \|/);
    expect(markdown).toMatch(/\| warm dashboard \(CACHE=on, settled range\): 0 upstream calls per request .* \| ✓ \|/);
    expect(markdown).toMatch(/\| session mix at 60 requests a minute per key: .* \| ✓ \|/);
    // A run of the cache passes alone judges only their targets.
    expect(markdown).not.toContain('dashboard p50 within upstream latency');
  }, 60_000);

  it('runs as `npm run bench` runs it, from its build (dist-bench/): --help names every pass', () => {
    const help = execFileSync(process.execPath, ['dist-bench/bench/run.js', '--help'], { encoding: 'utf8' });
    for (const pass of ['main', 'floor', 'stored', 'live', 'scale']) expect(help).toMatch(new RegExp(`^  ${pass} +`, 'm'));
    expect(help).toContain('[--floor-connections n (20)]');
  });

  it('refuses a bad option by its name before starting anything', () => {
    const run = spawnSync(process.execPath, ['dist-bench/bench/run.js', '--passes', 'floor', '--floor-connections', '0'], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('bench: floor-connections must be a number >= 1, got "0"\n');
  });
});
