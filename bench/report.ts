// The report as Markdown: one table per scenario and pass, the read cache's passes when they ran,
// then the targets with ✓/✗ and their figures.
import { median } from './percentiles.js';
import {
  FLOOR_TARGETS,
  type BenchReport,
  type CachePassResult,
  type FloorPassResult,
  type FloorRun,
  type Measurement,
  type PassResult,
  type ScenarioResult,
} from './bench.js';
import type { SessionPassResult, SharedPassResult } from './caching.js';
import { LIVE_TARGETS, type LivePassResult, type MemorySnapshot } from './live.js';
import { STORED_TARGETS, type StoredPassResult, type StoredRow } from './stored.js';
import type { ScalePassResult, ScaleRow } from './scale.js';

export interface Target {
  target: string;
  figure: string;
  /** null: not measured in this run. */
  met: boolean | null;
}

const DASH = '–';

function ms(value: number): string {
  if (!Number.isFinite(value)) return DASH;
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

function ratio(value: number, base: number | undefined): string {
  return base === undefined || !Number.isFinite(value) || !Number.isFinite(base) || base === 0 ? DASH : `${(value / base).toFixed(2)}×`;
}

function fixed(value: number | null, digits: number): string {
  return value === null || !Number.isFinite(value) ? DASH : value.toFixed(digits);
}

const CLIENT_LABEL: Record<Measurement['client'], string> = {
  gateway: 'gateway (GraphQL)',
  sequential: 'REST, sequential',
  parallel: 'REST, parallel',
};

/** The label of the previous build's rows (BenchReport.previousScript). */
export function previousLabel(script: string | undefined): string {
  return `previous build (${script ?? '?'})`;
}

/** One scenario's table: the gateway, the previous build's gateway right under it when measured, the baselines. */
export function scenarioTable(result: ScenarioResult, previousScript?: string): string {
  const rows: [string, Measurement][] = [[CLIENT_LABEL.gateway, result.gateway]];
  if (result.previous) rows.push([previousLabel(previousScript), result.previous.measurement]);
  for (const row of [result.sequential, result.parallel]) if (row !== null) rows.push([CLIENT_LABEL[row.client], row]);
  const lines = [
    '| client | req/s | p50 ms | p90 ms | p99 ms | upstream calls/req | gateway CPU ms/req | gateway peak RSS MB | p50 ÷ sequential | p50 ÷ parallel |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [label, row] of rows) {
    lines.push(
      `| ${label} | ${fixed(row.requestsPerSecond, 0)} | ${ms(row.p50)} | ${ms(row.p90)} | ${ms(row.p99)} | ` +
        `${fixed(row.upstreamCallsPerRequest, 2)} | ${fixed(row.cpuMsPerRequest, 2)} | ${fixed(row.peakRssMb, 1)} | ` +
        `${ratio(row.p50, result.sequential?.p50)} | ${ratio(row.p50, result.parallel?.p50)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * This build ÷ the previous build, scenario by scenario (medians of the same run); empty when the previous
 * build was not measured.
 */
export function previousTable(pass: PassResult): string[] {
  const measured = pass.results.filter((result) => result.previous !== undefined);
  if (measured.length === 0) return [];
  const out = [
    'This build ÷ previous build (medians of this run; req/s above 1, p50 and CPU below 1: this build is faster, cheaper):',
    '',
    '| scenario | req/s | p50 | CPU ms/req |',
    '|---|---:|---:|---:|',
  ];
  for (const result of measured) {
    const ratios = result.previous?.ratios;
    out.push(
      `| ${result.number}. ${result.scenario} | ${fixed(ratios?.requestsPerSecond ?? null, 2)} | ${fixed(ratios?.p50 ?? null, 2)} | ` +
        `${fixed(ratios?.cpuMsPerRequest ?? null, 2)} |`,
    );
  }
  return out;
}

function passLine(pass: PassResult): string {
  return `${pass.latencyMs} ms sandbox latency, ${pass.connections} connection${pass.connections === 1 ? '' : 's'}`;
}

/** The targets of the issue, judged on the report's figures. */
export function evaluateTargets(report: BenchReport): Target[] {
  // A run of the read cache's passes alone judges only their targets.
  const targets: Target[] = report.passes.length > 0 || !hasCachingPasses(report) ? scenarioTargets(report) : [];
  targets.push(...cachingTargets(report));
  if (report.floor) targets.push(...floorTargets(report.floor));
  if (report.stored) targets.push(...storedTargets(report.stored));
  if (report.live) targets.push(...liveTargets(report.live));
  return targets;
}

/**
 * The floor pass's targets: the gateway's throughput and CPU per request against the floor's, and against
 * Hive Gateway's (not measured when Hive Gateway was not).
 */
export function floorTargets(floor: FloorPassResult): Target[] {
  const where = `dashboard, ${floor.latencyMs} ms sandbox, ${floor.connections} connections, medians of ${floor.rounds} runs each`;
  const hive = floor.hive;
  const hiveCpu = hive?.hiveCpuRatio ?? Number.NaN;
  const overHive = hive?.gatewayRequestsPerSecondRatio ?? Number.NaN;
  const aggregator = floor.aggregator;
  const overAggregator = aggregator?.gatewayCpuRatio ?? Number.NaN;
  return [
    {
      target: `gateway req/s ÷ floor req/s ≥ ${FLOOR_TARGETS.requestsPerSecondRatio} (${where})`,
      figure: `${fixed(floor.requestsPerSecondRatio, 2)} (${fixed(floor.gateway.requestsPerSecond, 0)} ÷ ${fixed(floor.floor.requestsPerSecond, 0)})`,
      met: Number.isFinite(floor.requestsPerSecondRatio) ? floor.requestsPerSecondRatio >= FLOOR_TARGETS.requestsPerSecondRatio : null,
    },
    {
      target: `gateway CPU ms/req ÷ floor CPU ms/req ≤ ${FLOOR_TARGETS.cpuRatio} (${where})`,
      figure: `${fixed(floor.cpuRatio, 2)} (${fixed(floor.gateway.cpuMsPerRequest, 3)} ÷ ${fixed(floor.floor.cpuMsPerRequest, 3)})`,
      met: Number.isFinite(floor.cpuRatio) ? floor.cpuRatio <= FLOOR_TARGETS.cpuRatio : null,
    },
    {
      target: `Hive Gateway CPU ms/req ÷ gateway CPU ms/req ≥ ${FLOOR_TARGETS.hiveCpuRatio} (${where})`,
      figure: hive
        ? `${fixed(hiveCpu, 2)} (${fixed(hive.measurement.cpuMsPerRequest, 3)} ÷ ${fixed(floor.gateway.cpuMsPerRequest, 3)})`
        : 'not measured',
      met: Number.isFinite(hiveCpu) ? hiveCpu >= FLOOR_TARGETS.hiveCpuRatio : null,
    },
    {
      target: `gateway req/s ÷ Hive Gateway req/s ≥ ${FLOOR_TARGETS.hiveRequestsPerSecondRatio} (${where})`,
      figure: hive
        ? `${fixed(overHive, 2)} (${fixed(floor.gateway.requestsPerSecond, 0)} ÷ ${fixed(hive.measurement.requestsPerSecond, 0)})`
        : 'not measured',
      met: Number.isFinite(overHive) ? overHive >= FLOOR_TARGETS.hiveRequestsPerSecondRatio : null,
    },
    {
      target: `gateway CPU ms/req ÷ hand-written aggregator CPU ms/req ≤ ${FLOOR_TARGETS.aggregatorCpuRatio} (${where})`,
      figure: aggregator
        ? `${fixed(overAggregator, 2)} (${fixed(floor.gateway.cpuMsPerRequest, 3)} ÷ ${fixed(aggregator.measurement.cpuMsPerRequest, 3)})`
        : 'not measured',
      met: Number.isFinite(overAggregator) ? overAggregator <= FLOOR_TARGETS.aggregatorCpuRatio : null,
    },
  ];
}

/** The passes that are not scenario passes: the read cache's, the floor and live. */
function hasCachingPasses(report: BenchReport): boolean {
  return (
    report.cache !== undefined ||
    report.session !== undefined ||
    report.shared !== undefined ||
    report.floor !== undefined ||
    report.stored !== undefined ||
    report.live !== undefined ||
    report.scale !== undefined
  );
}

/** The read cache's targets, for the passes that ran. */
function cachingTargets(report: BenchReport): Target[] {
  const targets: Target[] = [];
  const { cache, session, shared } = report;
  if (cache) {
    const warm = cache.rows.filter((row) => row.cache === 'on');
    targets.push({
      target: `warm dashboard (CACHE=on, settled range): 0 upstream calls per request (${cache.latencyMs} ms sandbox)`,
      figure:
        warm.length === 0
          ? 'not measured'
          : warm
              .map(
                (row) =>
                  `${fixed(row.measurement.upstreamCallsPerRequest, 2)} at ${row.connections} conn. (${row.upstreamCalls} calls in ${row.measurement.requests} requests)`,
              )
              .join('; '),
      met: warm.length === 0 ? null : warm.every((row) => row.upstreamCalls === 0),
    });
  }
  if (session) {
    const off = session.runs.find((run) => run.cache === 'off');
    const on = session.runs.find((run) => run.cache === 'on');
    targets.push({
      target: `session mix at ${session.options.rateLimit} requests a minute per key: fewer RATE_LIMITED answers with the cache than without`,
      figure:
        off && on
          ? `${on.rateLimited} with CACHE=on vs ${off.rateLimited} with CACHE=off, of ${on.requests} requests each`
          : 'not measured',
      met: off && on ? on.rateLimited < off.rateLimited : null,
    });
  }
  if (shared) {
    const a = shared.rows.find((row) => row.gateway === 'A');
    const b = shared.rows.find((row) => row.gateway === 'B');
    targets.push({
      target: "two gateways on one Redis: the second gateway's first dashboard makes 0 upstream calls",
      figure: a && b ? `gateway B ${b.upstreamCalls} (gateway A ${a.upstreamCalls} before it)` : 'not measured',
      met: a && b ? b.upstreamCalls === 0 && b.problem === null : null,
    });
  }
  return targets;
}

function scenarioTargets(report: BenchReport): Target[] {
  const targets: Target[] = [];
  // The latency targets, for every pass with a real upstream latency and fewer than 100 connections
  // (the 100-connection pass saturates this machine by design).
  const dashboards = report.passes.flatMap((pass) => {
    const result = pass.results.find((r) => r.scenario === 'dashboard');
    return result && pass.latencyMs > 0 && pass.connections < 100 ? [{ pass, result }] : [];
  });
  for (const { pass, result } of dashboards) {
    const limit = pass.latencyMs + 5;
    targets.push({
      target: `dashboard p50 within upstream latency + 5 ms (${passLine(pass)})`,
      figure: `${ms(result.gateway.p50)} ms vs ${limit} ms (parallel REST floor ${ms(result.parallel?.p50 ?? Number.NaN)} ms)`,
      met: result.gateway.p50 <= limit,
    });
  }
  for (const { pass, result } of dashboards) {
    const speedup = result.sequential ? result.sequential.p50 / result.gateway.p50 : Number.NaN;
    targets.push({
      target: `dashboard at least 5× faster than sequential REST (p50, ${passLine(pass)})`,
      figure: Number.isFinite(speedup)
        ? `${speedup.toFixed(2)}× (${ms(result.sequential?.p50 ?? Number.NaN)} ms vs ${ms(result.gateway.p50)} ms)`
        : 'no baseline',
      met: Number.isFinite(speedup) ? speedup >= 5 : null,
    });
  }
  if (dashboards.length === 0) {
    targets.push({ target: 'dashboard p50 within upstream latency + 5 ms', figure: 'not measured', met: null });
    targets.push({ target: 'dashboard at least 5× faster than sequential REST', figure: 'not measured', met: null });
  }

  const zero = report.passes.filter((pass) => pass.latencyMs === 0);
  const overheads = zero.flatMap((pass) =>
    pass.results.filter((r) => r.parallel).map((r) => ({ pass, r, overhead: r.gateway.p50 - (r.parallel as Measurement).p50 })),
  );
  targets.push({
    target: 'gateway overhead at p50 under 2 ms per request (0 ms sandbox; gateway p50 − parallel REST p50)',
    figure:
      overheads.length === 0
        ? 'not measured'
        : overheads.map(({ pass, r, overhead }) => `${r.scenario} ${ms(overhead)} ms (${pass.connections} conn.)`).join('; '),
    met: overheads.length === 0 ? null : overheads.every(({ overhead }) => overhead < 2),
  });

  const calls = report.passes.flatMap((pass) => pass.results.map((r) => ({ pass, r })));
  // The calls each answer says it made (a read tried again is one call): a retry under load is not a
  // call more. Retried attempts, which the sandbox counts too, are shown beside.
  const made = (m: Measurement): number => m.reportedCallsPerRequest ?? m.upstreamCallsPerRequest;
  const retried = (m: Measurement): string => (m.retriedCalls ? ` (+${m.retriedCalls} retried)` : '');
  targets.push({
    target: 'upstream calls per request exactly the number of distinct REST reads (retries aside)',
    figure:
      calls.length === 0
        ? 'not measured'
        : calls
            .map(({ pass, r }) => `${r.scenario}@${pass.name} ${fixed(made(r.gateway), 2)}/${r.expectedCalls}${retried(r.gateway)}`)
            .join('; '),
    met: calls.length === 0 ? null : calls.every(({ r }) => Math.abs(made(r.gateway) - r.expectedCalls) < 0.005),
  });

  const loaded = report.passes.filter((pass) => pass.connections >= 100);
  const peak = loaded.length === 0 ? null : Math.max(...loaded.map((pass) => pass.gatewayPeakRssMb ?? Number.NaN));
  targets.push({
    target: 'gateway peak RSS under 150 MB at 100 concurrent connections (VmHWM after the pass)',
    figure: peak === null ? 'not measured' : `${fixed(peak, 1)} MB`,
    met: peak === null || !Number.isFinite(peak) ? null : peak < 150,
  });
  return targets;
}

export function formatReport(report: BenchReport): string {
  const { machine } = report;
  const out: string[] = [];
  out.push(
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ${machine.os}; Node ${machine.node}. ` +
      `Load average (1 min) ${machine.loadAverage[0]} at the start, ${machine.loadAverage[1]} at the end.`,
    '',
    `Each run: ${report.warmupSeconds} s warm-up, then about ${report.durationSeconds} s measured` +
      `${report.repeat > 1 ? `, ${report.repeat} times (medians shown)` : ''}; ` +
      `the whole benchmark took ${report.seconds} s. Latencies are of one GraphQL request, or of the REST calls giving the same data.` +
      (Object.keys(report.gatewayEnv).length > 0 ? ` Gateway environment: ${JSON.stringify(report.gatewayEnv)}.` : '') +
      (report.gatewayScript !== 'dist/main.js' ? ` Gateway: ${report.gatewayScript}.` : '') +
      (report.previousScript !== undefined && report.passes.some((pass) => pass.previousPeakRssMb !== undefined)
        ? ` Previous build: ${report.previousScript}, a second gateway with the same environment and node flags on the same ` +
          'sandbox, measured right after the gateway in each scenario, with the same runs.'
        : '') +
      (report.previousNode ? ` The previous build runs on Node ${report.previousNode}; the gateway on ${machine.node}.` : ''),
  );
  for (const pass of report.passes) {
    out.push('', `## Pass "${pass.name}": ${passLine(pass)}`);
    for (const result of pass.results) {
      out.push('', `### ${result.number}. ${result.title}`, '');
      out.push(scenarioTable(result, report.previousScript));
      const { previous } = result;
      const facts = [`${result.expectedCalls} distinct REST call${result.expectedCalls === 1 ? '' : 's'} per request`];
      if (result.waves !== null)
        facts.push(
          `${result.waves} wave${result.waves === 1 ? '' : 's'} of upstream calls (one request from a known key, in the sandbox's log)`,
        );
      if (result.sameCalls !== null)
        facts.push(
          result.sameCalls
            ? 'the gateway made the same REST calls as the baselines'
            : 'the gateway made other REST calls than the baselines',
        );
      if (previous)
        facts.push(`the previous build made ${previous.sameCalls ? 'the same REST calls as' : 'other REST calls than'} the gateway`);
      facts.push(
        `${result.gateway.requests} gateway requests measured${previous ? `, ${previous.measurement.requests} through the previous build` : ''}`,
      );
      const sandboxCpu: [string, Measurement | null][] = [
        ['gateway', result.gateway],
        ...(previous ? [['previous build', previous.measurement] as [string, Measurement]] : []),
        ['sequential', result.sequential],
        ['parallel', result.parallel],
      ];
      const sandboxCpuFigures = sandboxCpu
        .filter((entry): entry is [string, Measurement] => entry[1] !== null && entry[1].sandboxCpuMsPerCall !== null)
        .map(([label, row]) => `${label} ${fixed(row.sandboxCpuMsPerCall, 2)}`);
      if (sandboxCpuFigures.length > 0) facts.push(`sandbox CPU ms per REST call: ${sandboxCpuFigures.join(', ')}`);
      out.push('', `${facts.join('; ')}.`);
      for (const note of result.notes) out.push('', `> ${note}`);
      for (const note of previous?.notes ?? []) out.push('', `> previous build: ${note}`);
    }
    out.push(
      '',
      `Gateway peak RSS so far (VmHWM) after this pass: ${fixed(pass.gatewayPeakRssMb, 1)} MB` +
        (pass.previousPeakRssMb !== undefined ? `; previous build's: ${fixed(pass.previousPeakRssMb, 1)} MB.` : '.'),
    );
    const ratios = previousTable(pass);
    if (ratios.length > 0) out.push('', ...ratios);
  }
  if (report.cache) out.push('', ...cacheSection(report.cache));
  if (report.session) out.push('', ...sessionSection(report.session));
  if (report.shared) out.push('', ...sharedSection(report.shared));
  if (report.floor) out.push('', ...floorSection(report.floor));
  if (report.stored) out.push('', ...storedSection(report.stored));
  if (report.live) out.push('', ...liveSection(report.live));
  if (report.scale) out.push('', ...scaleSection(report.scale));
  out.push('', '## Targets', '', '| target | figure | met |', '|---|---|:-:|');
  for (const target of evaluateTargets(report)) {
    out.push(`| ${target.target} | ${target.figure} | ${target.met === null ? DASH : target.met ? '✓' : '✗'} |`);
  }
  return `${out.join('\n')}\n`;
}

function notes(lines: readonly string[]): string[] {
  return lines.flatMap((note) => ['', `> ${note}`]);
}

/** The cache pass: the settled-range dashboard, cold (CACHE=off) against warm (CACHE=on), at each connection count. */
export function cacheSection(cache: CachePassResult): string[] {
  const warm = cache.rows.filter((row) => row.cache === 'on');
  const fills = [...new Set(warm.map((row) => `${row.fillCalls ?? DASH} upstream calls; the next request ${row.secondCalls ?? DASH}`))];
  const out = [
    `## Pass "cache": the dashboard with a warm read cache, ${cache.latencyMs} ms sandbox latency`,
    '',
    `The dashboard over ${cache.from}..${cache.to} (the 30 days ending yesterday: settled, so its statistics are kept ` +
      `CACHE_TTL_SETTLED_S; the dashboard scenario's own range reaches today, ${cache.sandboxToday}, and would be kept ` +
      `CACHE_TTL_RECENT_S), through the harness's CACHE=off gateway (cold: every request reads upstream) and, at each ` +
      `connection count, a fresh CACHE=on gateway whose cache one request filled first (${fills.join('; ')}).`,
    '',
    '| gateway | connections | req/s | p50 ms | p90 ms | p99 ms | upstream calls/req | upstream calls | gateway CPU ms/req | p50 ÷ cold |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of cache.rows) {
    const m = row.measurement;
    const cold = cache.rows.find((other) => other.cache === 'off' && other.connections === row.connections);
    out.push(
      `| ${row.cache === 'on' ? 'CACHE=on (warm)' : 'CACHE=off (cold)'} | ${row.connections} | ${fixed(m.requestsPerSecond, 0)} | ${ms(m.p50)} | ` +
        `${ms(m.p90)} | ${ms(m.p99)} | ${fixed(m.upstreamCallsPerRequest, 2)} | ${row.upstreamCalls} | ${fixed(m.cpuMsPerRequest, 2)} | ` +
        `${ratio(m.p50, cold?.measurement.p50)} |`,
    );
  }
  out.push('', `Warm gateway's peak RSS (VmHWM): ${fixed(cache.warmPeakRssMb, 1)} MB.`);
  out.push(...notes(cache.notes));
  return out;
}

/** The session pass: one table, a row per run (cache off, cache on). */
export function sessionSection(session: SessionPassResult): string[] {
  const { options } = session;
  const out = [
    `## Pass "session": ${options.users} users on one key, sandbox limited to ${options.rateLimit} requests a minute per key`,
    '',
    `Each user opens the dashboard (${session.ranges[0]?.label ?? '?'}), then asks it again every ${options.intervalSeconds} s ` +
      `over the next of these ranges, for ${options.durationSeconds} s (users ${fixed(options.intervalSeconds / options.users, 1)} s apart; ` +
      `a request is sent on time whether or not the previous one was answered): ` +
      `${session.ranges.map((range) => `${range.label} ${range.from}..${range.to} (${range.settled ? 'settled' : 'reaches today'})`).join(', ')}. ` +
      `${options.latencyMs} ms sandbox latency; each run on a fresh gateway and fresh rate-limit windows.`,
    '',
    '| gateway | requests | answered with data, no error | with RATE_LIMITED errors (with some data) | other errors | stale answers | upstream calls | upstream 429s | cache hits / misses | p50 ms | p90 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const run of session.runs) {
    out.push(
      `| CACHE=${run.cache} | ${run.requests} | ${run.complete} | ${run.rateLimited} (${run.rateLimitedWithData}) | ${run.otherErrors} | ${run.stale} | ` +
        `${run.upstreamCalls} | ${run.upstream429} | ${run.cacheHits} / ${run.cacheMisses} | ${ms(run.p50)} | ${ms(run.p90)} | ${ms(run.maxMs)} |`,
    );
  }
  const codes = session.runs
    .filter((run) => Object.keys(run.otherCodes).length > 0)
    .map(
      (run) =>
        `CACHE=${run.cache}: ${Object.entries(run.otherCodes)
          .map(([code, n]) => `${code} ${n}`)
          .join(', ')}`,
    );
  out.push(...notes([...(codes.length > 0 ? [`other error codes: ${codes.join('; ')}`] : []), ...session.notes]));
  return out;
}

/** The shared pass: the calls of each gateway's first dashboard. */
export function sharedSection(shared: SharedPassResult): string[] {
  const out = [
    `## Pass "shared": two gateways on one Redis, ${shared.latencyMs} ms sandbox latency`,
    '',
    `Gateways A and B (CACHE=on, REDIS_URL to one redis-server${shared.redisVersion ? ` ${shared.redisVersion}` : ''} on a free port), ` +
      `both started before any request; the dashboard over ${shared.from}..${shared.to} (settled), first through A, then through B.`,
    '',
    '| gateway | request | upstream calls (sandbox) | extensions.upstreamCalls | cache hits / misses / stale | ms |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const row of shared.rows) {
    out.push(
      `| ${row.gateway} | ${row.request} | ${row.upstreamCalls} | ${row.reportedCalls ?? DASH} | ` +
        `${row.hits ?? DASH} / ${row.misses ?? DASH} / ${row.stale ?? DASH} | ${ms(row.ms)} |`,
    );
  }
  out.push(...notes(shared.notes));
  return out;
}

/**
 * The floor pass: the gateway and the minimal gateway, their medians, each run, and the ratios with their
 * targets; with a previous build (--floor-previous), its row and its ratios too.
 */
export function floorSection(floor: FloorPassResult): string[] {
  const { previous, hive, aggregator } = floor;
  const previousLabel = `previous (${floor.previousScript ?? '?'})`;
  const previousData =
    previous === undefined
      ? ''
      : previous.sameData === null
        ? "The previous build's data was not compared (a check request failed). "
        : previous.sameData
          ? 'The previous build answered the same data. '
          : 'The previous build answered different data. ';
  const out = [
    `## Pass "floor": the gateway against a minimal gateway on the same stack${hive ? ' and Hive Gateway over OpenAPI' : ''}, ` +
      `${floor.latencyMs} ms sandbox latency, ${floor.connections} connections`,
    '',
    `The dashboard through the harness's gateway (CACHE=off, NODE_ENV=production, its request log on unless --gateway-env says otherwise)` +
      (previous ? `, through the previous build's gateway (${floor.previousScript ?? '?'}, the same environment and node flags)` : '') +
      ` and through the floor (dist-bench/bench/floor-gateway.js: graphql-yoga, ` +
      'DataLoader and an undici Pool, schema from SDL, nothing else; a yardstick, not the product), alternately, ' +
      `${floor.rounds} measured runs each (medians shown). ` +
      (previous?.sameData === true && floor.sameData === true
        ? 'All three answered the same data. '
        : (floor.sameData === null
            ? 'The check requests failed: the data was not compared. '
            : floor.sameData
              ? 'Both answered the same data. '
              : 'They answered different data. ') + previousData) +
      `One dashboard made ${floor.checkCalls.gateway} upstream calls through the gateway, ` +
      (previous ? `${previous.checkCalls} through the previous build, ` : '') +
      `${floor.checkCalls.floor} through the floor.`,
    ...(hive
      ? [
          '',
          'Hive Gateway (@graphql-hive/gateway, its defaults, one process) over an OpenAPI document of the two REST reads ' +
            '(bench/hive-gateway.ts), composed with GraphQL Mesh against this sandbox, the Authorization header forwarded, ' +
            'measured last in each round with the same dashboard in its own schema: ' +
            `${hive.checkCalls} upstream calls; ` +
            (hive.sameData === null
              ? 'its statistics were not compared (a check request failed).'
              : hive.sameData
                ? "the same website and statistics rows as the gateway's."
                : "other statistics rows than the gateway's."),
        ]
      : []),
    '',
    '| gateway | req/s | p50 ms | p90 ms | p99 ms | upstream calls/req | CPU ms/req | peak RSS MB | stdout bytes/req | req/s of each run | CPU ms/req of each run |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  const rows: [string, Measurement, readonly FloorRun[]][] = [
    ['gateway (CACHE=off)', floor.gateway, floor.runs.gateway],
    ['floor', floor.floor, floor.runs.floor],
  ];
  if (previous) rows.push([previousLabel, previous.measurement, previous.runs]);
  if (hive) rows.push(['Hive Gateway (OpenAPI)', hive.measurement, hive.runs]);
  if (aggregator) rows.push(['aggregator (by hand, no GraphQL)', aggregator.measurement, aggregator.runs]);
  for (const [label, m, runs] of rows) {
    out.push(
      `| ${label} | ${fixed(m.requestsPerSecond, 0)} | ${ms(m.p50)} | ${ms(m.p90)} | ${ms(m.p99)} | ${fixed(m.upstreamCallsPerRequest, 2)} | ` +
        `${fixed(m.cpuMsPerRequest, 3)} | ${fixed(m.peakRssMb, 1)} | ${fixed(m.outputBytesPerRequest, 0)} | ` +
        `${runs.map((run) => fixed(run.requestsPerSecond, 0)).join(', ')} | ${runs.map((run) => fixed(run.cpuMsPerRequest, 3)).join(', ')} |`,
    );
  }
  const verdict = (met: boolean | null): string => (met === null ? 'not measured' : met ? 'met' : 'not met');
  const [rps, cpu, hiveCpu, overHive, overAggregator] = floorTargets(floor);
  out.push(
    '',
    `Gateway ÷ floor: req/s ${fixed(floor.requestsPerSecondRatio, 2)} (target ≥ ${FLOOR_TARGETS.requestsPerSecondRatio}: ${verdict(rps?.met ?? null)}); ` +
      `CPU ms/req ${fixed(floor.cpuRatio, 2)} (target ≤ ${FLOOR_TARGETS.cpuRatio}: ${verdict(cpu?.met ?? null)}).`,
  );
  if (hive) {
    out.push(
      '',
      `Hive Gateway ÷ gateway: CPU ms/req ${fixed(hive.hiveCpuRatio, 2)} (target ≥ ${FLOOR_TARGETS.hiveCpuRatio}: ${verdict(hiveCpu?.met ?? null)}); ` +
        `gateway ÷ Hive Gateway: req/s ${fixed(hive.gatewayRequestsPerSecondRatio, 2)} (target ≥ ${FLOOR_TARGETS.hiveRequestsPerSecondRatio}: ` +
        `${verdict(overHive?.met ?? null)}).`,
      '',
      `Hive Gateway ÷ floor: CPU ms/req ${fixed(hive.floorCpuRatio, 2)}; req/s ${fixed(hive.floorRequestsPerSecondRatio, 2)}.`,
    );
  }
  if (aggregator) {
    out.push(
      '',
      'The aggregator (dist-bench/bench/aggregator.js: node:http, one undici Pool, the seven reads sent at once with the ' +
        "caller's key, parsed, mapped and written; no GraphQL) answered " +
        (aggregator.sameData === null
          ? 'data not compared (a check request failed)'
          : aggregator.sameData
            ? 'the same data'
            : 'other data') +
        ` with ${aggregator.checkCalls} upstream calls. Gateway ÷ aggregator: CPU ms/req ${fixed(aggregator.gatewayCpuRatio, 2)} ` +
        `(target ≤ ${FLOOR_TARGETS.aggregatorCpuRatio}: ${verdict(overAggregator?.met ?? null)}); req/s ${fixed(aggregator.gatewayRequestsPerSecondRatio, 2)}.`,
    );
  }
  if (previous) {
    out.push(
      '',
      `Previous ÷ floor: req/s ${fixed(previous.requestsPerSecondRatio, 2)}; CPU ms/req ${fixed(previous.cpuRatio, 2)}.`,
      '',
      `Gateway ÷ previous (this build against the previous one, same run): req/s ${fixed(previous.gatewayRequestsPerSecondRatio, 2)}; ` +
        `CPU ms/req ${fixed(previous.gatewayCpuRatio, 2)}.`,
    );
  }
  out.push(...notes(floor.notes));
  return out;
}

/** The stored pass's target: the repeated dashboard's CPU per request against the static server's. */
export function storedTargets(stored: StoredPassResult): Target[] {
  const where = `repeated dashboard, stored answer against a static server of its bytes, ${stored.connections} connections, medians of ${stored.rounds} runs each`;
  return [
    {
      target: `stored answer CPU ms/req ÷ static server CPU ms/req ≤ ${STORED_TARGETS.cpuRatio} (${where})`,
      figure: `${fixed(stored.cpuRatio, 2)} (${fixed(stored.stored.cpuMsPerRequest, 3)} ÷ ${fixed(stored.static.cpuMsPerRequest, 3)})`,
      met: Number.isFinite(stored.cpuRatio) ? stored.cpuRatio <= STORED_TARGETS.cpuRatio : null,
    },
  ];
}

/** The stored pass: the repeated dashboard's stored answer, the static server, gateway B on Redis; ratios and targets. */
export function storedSection(stored: StoredPassResult): string[] {
  const out = [
    `## Pass "stored": the repeated dashboard against a static server of its bytes, ${stored.latencyMs} ms sandbox latency, ${stored.connections} connections`,
    '',
    `The dashboard through a gateway with CACHE=on (its defaults otherwise: no METRICS_PORT when its request log, which says when a stored answer is sent, is on), whose first request (${stored.fillCalls} upstream calls) stored the answer and ` +
      `the second sent it (${stored.secondCalls} calls); a static node:http server (dist-bench/bench/static-server.js, a yardstick) ` +
      `answering every request with the same ${stored.bytes} bytes` +
      (stored.shared ? '; and gateway B, on one Redis with a gateway A that stored the answer' : '') +
      `; alternately, ${stored.rounds} measured runs each (medians shown).`,
    '',
    '| server | req/s | p50 ms | CPU ms/req | upstream calls | req/s of each run | CPU ms/req of each run |',
    '|---|---:|---:|---:|---:|---|---|',
  ];
  const rows: [string, StoredRow | null][] = [
    ['gateway, stored answer (CACHE=on)', stored.stored],
    ['the previous build, stored answer', stored.previous],
    ['gateway B, stored answer in Redis', stored.shared],
    ['static server', stored.static],
  ];
  for (const [label, row] of rows) {
    if (row === null) continue;
    out.push(
      `| ${label} | ${fixed(row.requestsPerSecond, 0)} | ${ms(row.p50)} | ${fixed(row.cpuMsPerRequest, 3)} | ${row.upstreamCalls} | ` +
        `${row.runs.map((run) => fixed(run.requestsPerSecond, 0)).join(', ')} | ${row.runs.map((run) => fixed(run.cpuMsPerRequest, 3)).join(', ')} |`,
    );
  }
  const [cpu] = storedTargets(stored);
  const verdict = (met: boolean | null | undefined): string => (met == null ? 'not measured' : met ? 'met' : 'not met');
  out.push(
    '',
    `Stored answer ÷ static server: CPU ms/req ${fixed(stored.cpuRatio, 2)} (target ≤ ${STORED_TARGETS.cpuRatio}: ${verdict(cpu?.met)}); ` +
      `req/s ${fixed(stored.requestsPerSecondRatio, 2)} (information, no target).`,
  );
  if (stored.previous) {
    out.push(
      '',
      `This build ÷ the previous build, stored answer: CPU ms/req ${fixed(stored.previousCpuRatio ?? Number.NaN, 2)}; ` +
        `the previous build ÷ static server: CPU ms/req ${fixed(stored.previous.cpuMsPerRequest / stored.static.cpuMsPerRequest, 2)}.`,
    );
  }
  if (stored.shared) {
    out.push(
      '',
      `Gateway B (Redis) ÷ static server: CPU ms/req ${fixed(stored.sharedCpuRatio, 2)}; req/s ${fixed(stored.sharedRequestsPerSecondRatio, 2)}.`,
    );
  }
  out.push(...notes(stored.notes));
  return out;
}

/** What the live pass measured with a target: calls per poll, change → event, dashboard p50 with the streams open. */
export function liveTargets(live: LivePassResult): Target[] {
  const { polls, delays, p50 } = live;
  const queryCalls = median(live.queryCalls);
  const streams = `${live.subscribers} subscribers, one key, LIVE_INTERVAL_S=${live.intervalSeconds}, ${live.latencyMs} ms sandbox`;
  return [
    {
      target: `live: upstream calls of each poll = those of one execution of the document as a query (${streams})`,
      figure:
        polls.calls.length === 0
          ? 'no poll seen'
          : `${polls.calls.join(', ')} in the ${polls.calls.length} polls of ${fixed(polls.windowSeconds, 1)} s; the query ${live.queryCalls.join(', ')}`,
      met: polls.calls.length === 0 || queryCalls === null ? null : polls.calls.every((calls) => calls === queryCalls) && polls.sameCalls,
    },
    {
      target: `live: a change reaches every subscriber within interval + upstream round trip + ${LIVE_TARGETS.marginMs} ms (p99 over ${live.changes} changes × ${live.subscribers} subscribers)`,
      figure:
        delays.count === 0
          ? 'not measured'
          : `p99 ${ms(delays.p99)} ms vs ${ms(live.boundMs)} ms (p50 ${ms(delays.p50)}, max ${ms(delays.max)}; ${delays.missing} missed)`,
      met: delays.count === 0 ? null : delays.p99 <= live.boundMs && delays.missing === 0,
    },
    {
      target: `live: the same at the worst phase, estimated: a change just after a poll read its data (a poll period + after-poll p99)`,
      figure: Number.isFinite(live.worstCaseMs)
        ? `${ms(live.worstCaseMs)} ms vs ${ms(live.boundMs)} ms (period ${ms(median(polls.gapsMs) ?? Number.NaN)} + after-poll p99 ${ms(live.afterPoll.p99)})`
        : 'not measured',
      met: Number.isFinite(live.worstCaseMs) ? live.worstCaseMs <= live.boundMs : null,
    },
    {
      target: `live: dashboard p50 with ${live.subscribers} streams open within ${Math.round((LIVE_TARGETS.p50Ratio - 1) * 100)} % of it with none (${live.connections} connections)`,
      figure: `${ms(p50.open)} ms vs ${ms(p50.none)} ms: ${fixed(p50.ratio, 2)}× (a change every interval: ${ms(p50.openChanging)} ms, ${fixed(p50.changingRatio, 2)}×)`,
      met: Number.isFinite(p50.ratio) ? p50.ratio <= LIVE_TARGETS.p50Ratio : null,
    },
  ];
}

function megabytes(value: number | null): string {
  return fixed(value, 1);
}

/** The live pass: the four figures with their targets, then each change, the memory and the dashboard runs. */
export function liveSection(live: LivePassResult): string[] {
  const { polls, delays, afterPoll, memory, p50 } = live;
  const verdict = (met: boolean | null): string => (met === null ? DASH : met ? '✓' : '✗');
  const [calls, change, worst, query] = liveTargets(live);
  const env = Object.entries(live.gatewayEnv)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  const memoryFigure =
    memory.rssKbPerStream === null
      ? 'not measured'
      : `RSS ${fixed(memory.rssKbPerStream, 1)} KB, heap used ${fixed(memory.heapKbPerStream, 1)} KB ` +
        `(RSS ${megabytes(memory.none.rssMb)} → ${megabytes(memory.open.rssMb)} MB, heap ${megabytes(memory.none.heapUsedMb)} → ${megabytes(memory.open.heapUsedMb)} MB` +
        `${memory.none.gc && memory.open.gc ? ', each after a forced full GC' : ', no forced GC'})`;
  const out = [
    `## Pass "live": ${live.subscribers} subscribers of one live dashboard, LIVE_INTERVAL_S=${live.intervalSeconds}, ${live.latencyMs} ms sandbox latency`,
    '',
    `${live.subscribers} streams (GraphQL over SSE, distinct connections: one socket each, opened from the harness with undici) on one key ` +
      `and one document, \`${live.document}\` (variables \`{"id":"1"}\`), through a gateway of their own (${env}; the harness's ` +
      `environment otherwise). Opening them all until each had its first event took ${live.openSeconds.map((s) => fixed(s, 1)).join(', ')} s. ` +
      `Upstream round trip (one call from the harness, median of 20): ${ms(live.rttMs)} ms; ` +
      `bound = ${live.intervalSeconds * 1000} + ${ms(live.rttMs)} + ${LIVE_TARGETS.marginMs} = ${ms(live.boundMs)} ms.`,
    '',
    '| figure | value | target | met |',
    '|---|---|---|:-:|',
    `| upstream calls per poll, every stream open, nothing changing | ${calls?.figure ?? DASH}; a poll every ${ms(median(polls.gapsMs) ?? Number.NaN)} ms (median), ` +
      `its upstream time ${ms(median(polls.upstreamMs) ?? Number.NaN)} ms (median) | = the query's, the same calls | ${verdict(calls?.met ?? null)} |`,
    `| change (POST /__sandbox/traffic) → the event showing it, at every subscriber (${delays.count} deliveries) | ` +
      `p50 ${ms(delays.p50)} ms, p99 ${ms(delays.p99)} ms, max ${ms(delays.max)} ms; ${delays.withinBound} within the bound, ${delays.missing} missed | ` +
      `p99 ≤ ${ms(live.boundMs)} ms | ${verdict(change?.met ?? null)} |`,
    `| of which after the poll that read the change started (delay − the wait for that poll) | ` +
      (afterPoll.count === 0
        ? 'not measured'
        : `p50 ${ms(afterPoll.p50)} ms, p99 ${ms(afterPoll.p99)} ms, max ${ms(afterPoll.max)} ms (RTT + ${LIVE_TARGETS.marginMs} = ` +
          `${ms(live.rttMs + LIVE_TARGETS.marginMs)} ms)`) +
      ' | – | – |',
    `| the worst phase, estimated: a change just after a poll read its data waits a whole period, then the after-poll p99 | ` +
      `${worst?.figure ?? DASH} | ≤ ${ms(live.boundMs)} ms | ${verdict(worst?.met ?? null)} |`,
    `| memory per open stream ((${live.subscribers} open − none) ÷ ${live.subscribers}) | ${memoryFigure} | – | – |`,
    `| the gateway's CPU at rest (/proc, 10 ms ticks, ${fixed(polls.windowSeconds, 1)} s each) | ${fixed(live.idleCpuMsPerSecond.none, 1)} ms a second ` +
      `with no stream, ${fixed(live.idleCpuMsPerSecond.open, 1)} ms a second with ${live.subscribers} open (a poll every interval, ` +
      'nothing pushed) | – | – |',
    `| dashboard p50 (${live.connections} connections, medians of ${live.repeat} run${live.repeat === 1 ? '' : 's'}) | ` +
      `none ${ms(p50.none)} ms, ${live.subscribers} open ${ms(p50.open)} ms (${fixed(p50.ratio, 2)}×), open with a change every interval ` +
      `${ms(p50.openChanging)} ms (${fixed(p50.changingRatio, 2)}×) | open ÷ none ≤ ${LIVE_TARGETS.p50Ratio} | ${verdict(query?.met ?? null)} |`,
    '',
    "Each change is posted at a random point of the interval (but not within half a second of a minute's turn, when the " +
      "sandbox's today grows by itself; the figure it is compared with is read from the sandbox just before): its delay is the " +
      'wait for the next poll to start (0 to one interval: polls are timed from start to start), ' +
      "then that poll's upstream round trip, the " +
      "gateway's work and the push to every stream. The wait is read from the sandbox's log (the arrival of the first visitors " +
      "call after the sandbox counted the change, on the harness's clock: offset " +
      `${fixed(live.clockOffsetMs, 2)} ms from 5 calls). Spread: the last subscriber's delay − the first's.`,
    '',
    "CPU: from the POST to the last arrival, the gateway's (/proc, 10 ms ticks: the poll and the push) and the harness's (receiving " +
      `the ${live.subscribers} events on one thread, on the same cores).`,
    '',
    '| change | received | missed | first ms | p50 ms | p99 ms | max ms | spread ms | wait for the poll ms | after the poll: p50 / p99 / max ms | gateway CPU ms | harness CPU ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...live.perChange.map(
      (c, i) =>
        `| ${i + 1} | ${c.received} | ${c.missing} | ${ms(c.first)} | ${ms(c.p50)} | ${ms(c.p99)} | ${ms(c.max)} | ${ms(c.spread)} | ` +
        `${c.waitMs === null ? DASH : ms(c.waitMs)} | ${c.afterPoll ? `${ms(c.afterPoll.p50)} / ${ms(c.afterPoll.p99)} / ${ms(c.afterPoll.max)}` : DASH} | ` +
        `${fixed(c.gatewayCpuMs, 0)} | ${fixed(c.harnessCpuMs, 0)} |`,
    ),
    '',
    '| gateway memory | RSS MB | heap used MB | heap total MB | external MB |',
    '|---|---:|---:|---:|---:|',
    ...(
      [
        ['no stream open (after the warm-up)', memory.none],
        [`${live.subscribers} streams open`, memory.open],
        ['every stream closed again (after the dashboard runs)', memory.closed],
      ] as [string, MemorySnapshot | null][]
    )
      .filter((row): row is [string, MemorySnapshot] => row[1] !== null)
      .map(
        ([label, m]) =>
          `| ${label} | ${megabytes(m.rssMb)} | ${megabytes(m.heapUsedMb)} | ${megabytes(m.heapTotalMb)} | ${megabytes(m.externalMb)} |`,
      ),
    '',
    '| dashboard run | round | req/s | p50 ms | p99 ms | requests | errors | events per stream |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...live.runs.map(
      (run) =>
        `| ${run.streams === 'none' ? 'no stream' : run.streams === 'open' ? `${live.subscribers} open, idle` : `${live.subscribers} open, a change every interval`} | ` +
        `${run.round} | ${fixed(run.requestsPerSecond, 0)} | ${ms(run.p50)} | ${ms(run.p99)} | ${run.requests} | ${run.errors} | ${run.eventsPerStream ?? DASH} |`,
    ),
    '',
    `Upstream calls in the ${2 * live.intervalSeconds} s after the last stream closed: ${live.callsAfterClose ?? DASH} (the poller stops with its last stream). ` +
      `The pass's gateway's peak RSS (VmHWM): ${megabytes(live.gatewayPeakRssMb)} MB.`,
  ];
  out.push(...notes(live.notes));
  return out;
}

/** The scale pass: N gateways on one Redis and on a cluster, each key's first dashboard and the repeats. */
export function scaleSection(scale: ScalePassResult): string[] {
  const storeName = (store: ScaleRow['store']): string => (store === 'redis' ? 'one Redis' : 'cluster (3 + 3)');
  const out = [
    `## Pass "scale": gateways sharing one Redis, then a Redis Cluster, ${scale.keys} keys, ${scale.latencyMs} ms sandbox`,
    '',
    `Redis ${scale.redisVersion ?? DASH}. Each row: the store emptied, that many gateway processes (CACHE=on, REDIS_URL on it); ` +
      `"first": each key's first dashboard (${scale.from} to ${scale.to}, a website and six statistics), key i through ` +
      `gateway i mod N, ${scale.connections} at a time; "repeat": the same dashboards for the run's duration, ` +
      `${scale.connections} clients shared by the gateways, each going through the keys in turn. Per dashboard: the ` +
      "gateways' CPU, upstream calls, commands the masters ran (INFO commandstats) and bytes they took in and sent out " +
      '(INFO stats, replication apart).',
    '',
    "| store | gateways | phase | dashboards | req/s | p50 ms | p99 ms | CPU ms | upstream calls | Redis commands | Redis bytes in / out | masters' shares |",
    '|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const row of scale.rows) {
    for (const [name, phase] of [
      ['first', row.first],
      ['repeat', row.repeat],
    ] as const) {
      out.push(
        `| ${storeName(row.store)} | ${row.gateways} | ${name} | ${phase.dashboards}${phase.errors ? ` (${phase.errors} failed)` : ''} | ` +
          `${fixed(phase.requestsPerSecond, 0)} | ${fixed(phase.p50, 1)} | ${fixed(phase.p99, 1)} | ${fixed(phase.cpuMs, 2)} | ` +
          `${fixed(phase.upstreamCalls, 2)} | ${fixed(phase.redisCommands, 2)} | ` +
          `${fixed(phase.redisBytesIn, 0)} / ${fixed(phase.redisBytesOut, 0)} | ` +
          `${phase.masterShares.map((share) => `${Math.round(share * 100)} %`).join(', ')} |`,
      );
    }
  }
  out.push('', 'Commands per dashboard:', '');
  for (const row of scale.rows) {
    for (const [name, phase] of [
      ['first', row.first],
      ['repeat', row.repeat],
    ] as const) {
      const commands = Object.entries(phase.commands).map(([command, calls]) => `${command} ${fixed(calls, 2)}`);
      out.push(`- ${storeName(row.store)}, ${row.gateways} gateways, ${name}: ${commands.join(', ') || DASH}`);
    }
  }
  const ratios: string[] = [];
  for (const row of scale.rows.filter((candidate) => candidate.store === 'cluster')) {
    const single = scale.rows.find((candidate) => candidate.store === 'redis' && candidate.gateways === row.gateways);
    if (!single || single.repeat.cpuMs === null || row.repeat.cpuMs === null) continue;
    ratios.push(
      `${row.gateways} gateways: CPU ms per repeated dashboard ${fixed(row.repeat.cpuMs / single.repeat.cpuMs, 2)}, ` +
        `p50 ${fixed(row.repeat.p50 / single.repeat.p50, 2)}, p99 ${fixed(row.repeat.p99 / single.repeat.p99, 2)}`,
    );
  }
  if (ratios.length > 0) out.push('', `Cluster ÷ one Redis: ${ratios.join('; ')}.`);
  out.push(...notes(scale.notes));
  return out;
}
