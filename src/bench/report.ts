// The report as Markdown: one table per scenario and pass, then the targets with ✓/✗ and their figures.
import type { BenchReport, Measurement, PassResult, ScenarioResult } from './bench.js';

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

export function scenarioTable(result: ScenarioResult): string {
  const rows = [result.gateway, result.sequential, result.parallel].filter((row): row is Measurement => row !== null);
  const lines = [
    '| client | req/s | p50 ms | p90 ms | p99 ms | upstream calls/req | gateway CPU ms/req | gateway peak RSS MB | p50 ÷ sequential | p50 ÷ parallel |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${CLIENT_LABEL[row.client]} | ${fixed(row.requestsPerSecond, 0)} | ${ms(row.p50)} | ${ms(row.p90)} | ${ms(row.p99)} | ` +
        `${fixed(row.upstreamCallsPerRequest, 2)} | ${fixed(row.cpuMsPerRequest, 2)} | ${fixed(row.peakRssMb, 1)} | ` +
        `${ratio(row.p50, result.sequential?.p50)} | ${ratio(row.p50, result.parallel?.p50)} |`,
    );
  }
  return lines.join('\n');
}

function passLine(pass: PassResult): string {
  return `${pass.latencyMs} ms sandbox latency, ${pass.connections} connection${pass.connections === 1 ? '' : 's'}`;
}

/** The targets of the issue, judged on the report's figures. */
export function evaluateTargets(report: BenchReport): Target[] {
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
      figure: Number.isFinite(speedup) ? `${speedup.toFixed(2)}× (${ms(result.sequential?.p50 ?? Number.NaN)} ms vs ${ms(result.gateway.p50)} ms)` : 'no baseline',
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
  targets.push({
    target: 'upstream calls per request exactly the number of distinct REST reads',
    figure: calls.length === 0 ? 'not measured' : calls.map(({ pass, r }) => `${r.scenario}@${pass.name} ${fixed(r.gateway.upstreamCallsPerRequest, 2)}/${r.expectedCalls}`).join('; '),
    met: calls.length === 0 ? null : calls.every(({ r }) => Math.abs(r.gateway.upstreamCallsPerRequest - r.expectedCalls) < 0.005),
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
      (report.gatewayScript !== 'dist/main.js' ? ` Gateway: ${report.gatewayScript}.` : ''),
  );
  for (const pass of report.passes) {
    out.push('', `## Pass "${pass.name}": ${passLine(pass)}`);
    for (const result of pass.results) {
      out.push('', `### ${result.number}. ${result.title}`, '');
      out.push(scenarioTable(result));
      const facts = [`${result.expectedCalls} distinct REST call${result.expectedCalls === 1 ? '' : 's'} per request`];
      if (result.sameCalls !== null) facts.push(result.sameCalls ? 'the gateway made the same REST calls as the baselines' : 'the gateway made other REST calls than the baselines');
      facts.push(`${result.gateway.requests} gateway requests measured`);
      const sandboxCpu = [result.gateway, result.sequential, result.parallel]
        .filter((row): row is Measurement => row !== null && row.sandboxCpuMsPerCall !== null)
        .map((row) => `${row.client} ${fixed(row.sandboxCpuMsPerCall, 2)}`);
      if (sandboxCpu.length > 0) facts.push(`sandbox CPU ms per REST call: ${sandboxCpu.join(', ')}`);
      out.push('', `${facts.join('; ')}.`);
      for (const note of result.notes) out.push('', `> ${note}`);
    }
    out.push('', `Gateway peak RSS so far (VmHWM) after this pass: ${fixed(pass.gatewayPeakRssMb, 1)} MB.`);
  }
  out.push('', '## Targets', '', '| target | figure | met |', '|---|---|:-:|');
  for (const target of evaluateTargets(report)) {
    out.push(`| ${target.target} | ${target.figure} | ${target.met === null ? DASH : target.met ? '✓' : '✗'} |`);
  }
  return `${out.join('\n')}\n`;
}
