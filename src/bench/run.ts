// `npm run bench`: the full benchmark, Markdown on stdout, progress on stderr.
//
//   npm run bench -- --duration 10 --connections 10 --latency 20 --scenarios dashboard,website
//                    --passes main,light,overhead,load --repeat 3 --out bench.md --json bench.json
//                    --gateway-node-args="--cpu-prof --cpu-prof-dir=prof"   (use = for values starting with -)
//
// Every option also reads from the environment: BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS,
// BENCH_LOAD_CONNECTIONS, BENCH_LATENCY_MS, BENCH_SCENARIOS, BENCH_PASSES, BENCH_REPEAT,
// BENCH_BASELINES (0 to skip), BENCH_GATEWAY_NODE_ARGS (space-separated, e.g. "--cpu-prof"),
// BENCH_GATEWAY_ENV (JSON object, e.g. '{"UPSTREAM_CONNECTIONS":"128"}'), BENCH_GATEWAY_SCRIPT (another
// build's main.js, to compare before/after), BENCH_OUT, BENCH_JSON.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PASS_NAMES, defaultPasses, runBench } from './bench.js';
import { formatReport } from './report.js';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.js';

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

function list<T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((item) => item.trim()).filter(Boolean);
  for (const item of items) if (!(allowed as readonly string[]).includes(item)) fail(`${name}: "${item}" is not one of ${allowed.join(', ')}`);
  return items as T[];
}

function number(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) fail(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

const { values } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'load-connections': { type: 'string' },
    latency: { type: 'string' },
    scenarios: { type: 'string' },
    passes: { type: 'string' },
    repeat: { type: 'string' },
    baselines: { type: 'string' },
    'gateway-node-args': { type: 'string' },
    'gateway-env': { type: 'string' },
    'gateway-script': { type: 'string' },
    out: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(
    'npm run bench -- [--duration s] [--warmup s] [--connections n] [--load-connections n] [--latency ms]\n' +
      `  [--scenarios ${SCENARIO_NAMES.join(',')}] [--passes ${PASS_NAMES.join(',')}] [--repeat n] [--baselines 0|1]\n` +
      '  [--gateway-node-args="--cpu-prof --cpu-prof-dir=prof"] [--gateway-env \'{"UPSTREAM_CONNECTIONS":"128"}\']\n' +
      '  [--gateway-script /path/to/other/dist/main.js] [--out file.md] [--json file.json]\n',
  );
  process.exit(0);
}
const env = process.env;
const pick = (flag: string | undefined, variable: string): string | undefined => flag ?? (env[variable]?.trim() || undefined);

const scenarios = list<ScenarioName>('scenarios', pick(values.scenarios, 'BENCH_SCENARIOS'), SCENARIO_NAMES);
const passes = defaultPasses({
  latencyMs: number('latency', pick(values.latency, 'BENCH_LATENCY_MS'), 20, 0),
  connections: number('connections', pick(values.connections, 'BENCH_CONNECTIONS'), 10, 1),
  loadConnections: number('load-connections', pick(values['load-connections'], 'BENCH_LOAD_CONNECTIONS'), 100, 1),
  ...(scenarios ? { scenarios } : {}),
  ...(() => {
    const wanted = list('passes', pick(values.passes, 'BENCH_PASSES'), PASS_NAMES);
    return wanted ? { passes: wanted } : {};
  })(),
});
if (passes.length === 0) fail('no pass has a scenario to run: check --scenarios and --passes');

let gatewayEnv: Record<string, string> = {};
const rawEnv = pick(values['gateway-env'], 'BENCH_GATEWAY_ENV');
if (rawEnv !== undefined) {
  try {
    gatewayEnv = JSON.parse(rawEnv) as Record<string, string>;
  } catch {
    fail('gateway-env must be a JSON object of strings');
  }
}

const report = await runBench({
  durationSeconds: number('duration', pick(values.duration, 'BENCH_DURATION'), 10, 0.1),
  warmupSeconds: number('warmup', pick(values.warmup, 'BENCH_WARMUP'), 2, 0.1),
  repeat: Math.round(number('repeat', pick(values.repeat, 'BENCH_REPEAT'), 1, 1)),
  baselines: pick(values.baselines, 'BENCH_BASELINES') !== '0',
  passes,
  gatewayEnv,
  gatewayNodeArgs: (pick(values['gateway-node-args'], 'BENCH_GATEWAY_NODE_ARGS') ?? '').split(/\s+/).filter(Boolean),
  gatewayScript: pick(values['gateway-script'], 'BENCH_GATEWAY_SCRIPT') ?? 'dist/main.js',
  log: (line) => process.stderr.write(`${line}\n`),
});
const markdown = formatReport(report);
process.stdout.write(markdown);
const out = pick(values.out, 'BENCH_OUT');
if (out) writeFileSync(out, markdown);
const json = pick(values.json, 'BENCH_JSON');
if (json) writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
