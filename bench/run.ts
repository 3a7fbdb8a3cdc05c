// `npm run bench`: the full benchmark, Markdown on stdout, progress on stderr.
//
//   npm run bench -- --duration 10 --connections 10 --latency 20 --scenarios dashboard,website
//                    --passes main,light,overhead,load --repeat 3 --out bench.md --json bench.json
//                    --gateway-node-args="--cpu-prof --cpu-prof-dir=prof"   (use = for values starting with -)
//
// This build against another one, in the same run:
//   npm run bench -- --repeat 3 --previous /path/to/previous/dist/main.js
//            --previous: another build's main.js (relative to the project root or absolute; it must find its
//            node_modules), started once next to the gateway (same environment and node flags, same sandbox)
//            and measured in every scenario pass (main, light, overhead, load) right after the gateway,
//            scenario by scenario, with the same runs (--repeat): its row under the gateway's in each table, its
//            peak RSS after each pass, and this build ÷ previous build per scenario (req/s, p50, CPU ms/req).
//            The floor pass measures it too, unless --floor-previous names another build.
//   npm run bench -- --passes floor --repeat 5 --previous dist/main.js --previous-node /path/to/node22/bin/node
//            --previous-node: the node binary that runs --previous (default: the one running the bench); with
//            --previous dist/main.js, the same build under two Node versions, alternating in one run.
//
// Without --passes: main, light, overhead, load, then floor (when the dashboard is among --scenarios).
// The read cache's passes run only when named:
//   npm run bench -- --passes cache,session,shared [--session-duration 120 --session-interval 5
//                    --session-users 5 --session-rate-limit 60 --redis-server redis-server]
//   cache    the dashboard over a settled range (the 30 days ending yesterday) through a CACHE=on
//            gateway warmed by one request, against the CACHE=off gateway: upstream calls per request
//            (target 0), p50; at 1 connection and at --connections; --latency (20 ms) sandbox.
//   session  users on one key against a sandbox limited to --session-rate-limit requests a minute per
//            key, each opening the dashboard then switching every --session-interval s between three
//            settled ranges and one reaching today, for --session-duration s; CACHE=off then CACHE=on:
//            answers with data, RATE_LIMITED, stale.
//   shared   a redis-server on a free port, two gateways with REDIS_URL on it: the calls of A's first
//            dashboard, then of B's (target 0).
// The floor pass, in every run without --passes, or alone:
//   npm run bench -- --passes floor --repeat 3 --duration 8 --warmup 2
//   floor    the dashboard at 0 ms sandbox and 20 connections, alternately through the gateway (CACHE=off,
//            NODE_ENV=production, its request log on at info), through dist-bench/bench/floor-gateway.js (a
//            minimal gateway on the same stack, a yardstick only), through dist-bench/bench/aggregator.js (the
//            dashboard written by hand: node:http, one undici Pool, its seven reads at once, no GraphQL) and
//            through Hive Gateway over an OpenAPI source (bench/hive-gateway.ts, composed with GraphQL Mesh at
//            bench time, another yardstick), max(3, --repeat) runs each: medians of req/s and CPU ms/req
//            (targets, issue 47: gateway ÷ floor req/s >= 1.3 and CPU <= 0.7; Hive Gateway ÷ gateway CPU >= 4;
//            gateway ÷ Hive Gateway req/s >= 4; issue 60: gateway ÷ aggregator CPU <= 1.3).
//            --floor-connections n: the pass at n connections instead of 20 (issue 60 measured at 8).
// Every scenario pass above 0 ms counts the waves of upstream calls of its check request (bench/waves.ts).
//   npm run bench -- --passes floor --repeat 5 --duration 6 --warmup 3 --floor-previous /path/to/previous/dist/main.js
//            --floor-previous: another build's main.js (relative to the project root or absolute; keep the copy
//            inside the project so it finds node_modules), started like the gateway (same environment, CACHE=off,
//            same node flags) and measured in the same alternation (gateway, previous, floor…): a third row, its
//            ratios to the floor, and gateway ÷ previous (this build against the previous one, same run).
//            Without --floor-previous, the floor pass's previous build is --previous, if given. The stored pass
//            measures --floor-previous too (CACHE=on, its stored answer), with the floor pass or alone.
// The stored pass, with the floor pass in every run without --passes, or alone:
//   npm run bench -- --passes floor,stored --repeat 3 --duration 6 --warmup 2 [--redis-server redis-server]
//   stored   the repeated dashboard through a CACHE=on gateway, answered with its stored answer
//            (src/cache/stored-answers.ts), and through dist-bench/bench/static-server.js (node:http answering the
//            same bytes, a yardstick), and through a second gateway on one Redis with the first (when
//            redis-server starts), 0 ms sandbox, 20 connections, max(3, --repeat) runs each, alternately:
//            medians of req/s and CPU ms/req, stored ÷ static (target, issue 60: CPU ratio <= 1.25; req/s for
//            information).
// The live pass, only when named (not in the default run: it measures subscriptions, not the query path, opens
// 1,000 sockets from the harness and takes about 2 minutes at --repeat 1, 4-5 at --repeat 5):
//   npm run bench -- --passes live [--live-subscribers 1000 --live-interval 2 --live-intervals 5 --live-changes 10]
//                    [--latency 20 --connections 10 --repeat 3 --duration 10 --warmup 2]
//   live     a gateway of its own (LIVE_INTERVAL_S=--live-interval, LIVE_CALLS_PER_MIN=100000, LIVE_MAX_STREAMS and
//            LIVE_MAX_STREAMS_PER_KEY 2 × subscribers + 100, started with --inspect on a free port of 127.0.0.1 to force
//            a GC before reading its memory) and --live-subscribers graphql-sse streams (distinct connections, one
//            undici socket each) from the harness on one key and one document (website 1 and four statistics of
//            today), --latency sandbox:
//            1. the upstream calls of each poll over --live-intervals intervals (the sandbox's log, grouped by
//               arrival) against one execution of the document as a query (target: equal, the same calls);
//            2. --live-changes times POST /__sandbox/traffic at a random point of the interval, and at every
//               subscriber the time to the event showing it: p50/p99/max (target: p99 <= interval + one upstream
//               round trip measured from the harness + 100 ms);
//            3. the gateway's RSS and heap (after a forced full GC) with no stream and all of them open, per stream;
//            4. the dashboard scenario's p50 (autocannon, --connections, --warmup then --duration) with the streams
//               open (idle; and with a change every interval, for information) and with none, --repeat rounds
//               alternating which comes first: medians (target: open / none <= 1.1).
// The scale pass, only when named (issue 40: a Redis Cluster of six redis-servers and up to 4 gateways more):
//   npm run bench -- --passes scale [--scale-gateways 2,4 --scale-keys 1000 --scale-connections 32 --latency 20
//                    --duration 10 --warmup 2 --redis-server redis-server --redis-cli redis-cli]
//   scale    one Redis, then a Redis Cluster (3 masters, 3 replicas); for each number of gateways: the store
//            emptied, that many gateways with CACHE=on and REDIS_URL on it, each of the sandbox's tenant keys'
//            first dashboard, then the same dashboards again for --duration s: per dashboard the gateways' CPU,
//            upstream calls, Redis commands and bytes, p50/p99, and each master's share.
//
// Every option also reads from the environment: BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS,
// BENCH_LOAD_CONNECTIONS, BENCH_LATENCY_MS, BENCH_SCENARIOS, BENCH_PASSES, BENCH_REPEAT,
// BENCH_BASELINES (0 to skip), BENCH_GATEWAY_NODE_ARGS (space-separated, e.g. "--cpu-prof"),
// BENCH_GATEWAY_ENV (JSON object, e.g. '{"UPSTREAM_CONNECTIONS":"128"}'), BENCH_GATEWAY_SCRIPT (another
// build's main.js, to compare before/after), BENCH_OUT, BENCH_JSON, BENCH_SESSION_DURATION,
// BENCH_SESSION_INTERVAL, BENCH_SESSION_USERS, BENCH_SESSION_RATE_LIMIT, BENCH_REDIS_SERVER,
// BENCH_FLOOR_PREVIOUS, BENCH_FLOOR_CONNECTIONS, BENCH_PREVIOUS, BENCH_LIVE_SUBSCRIBERS, BENCH_LIVE_INTERVAL,
// BENCH_LIVE_INTERVALS, BENCH_LIVE_CHANGES, BENCH_SCALE_GATEWAYS, BENCH_SCALE_KEYS, BENCH_SCALE_CONNECTIONS,
// BENCH_REDIS_CLI.
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  DEFAULT_PASS_NAMES,
  FLOOR_CONNECTIONS,
  FLOOR_TARGETS,
  PASS_NAMES,
  cachingPasses,
  defaultPasses,
  floorPass,
  livePass,
  runBench,
  scalePass,
  DEFAULT_SCALE,
  storedPass,
} from './bench.js';
import { STORED_TARGETS } from './stored.js';
import { DEFAULT_SESSION } from './caching.js';
import { DEFAULT_LIVE, LIVE_TARGETS } from './live.js';
import { PROJECT_ROOT } from './processes.js';
import { MAX_TENANT_KEYS } from '../src/sandbox/demo-data.js';
import { formatReport } from './report.js';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.js';

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

function list<T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of items)
    if (!(allowed as readonly string[]).includes(item)) fail(`${name}: "${item}" is not one of ${allowed.join(', ')}`);
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
    'session-duration': { type: 'string' },
    'session-interval': { type: 'string' },
    'session-users': { type: 'string' },
    'session-rate-limit': { type: 'string' },
    'redis-server': { type: 'string' },
    'floor-previous': { type: 'string' },
    'floor-connections': { type: 'string' },
    'previous-node': { type: 'string' },
    previous: { type: 'string' },
    'live-subscribers': { type: 'string' },
    'live-interval': { type: 'string' },
    'live-intervals': { type: 'string' },
    'live-changes': { type: 'string' },
    'scale-gateways': { type: 'string' },
    'scale-keys': { type: 'string' },
    'scale-connections': { type: 'string' },
    'redis-cli': { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(
    'npm run bench -- [--duration s] [--warmup s] [--connections n] [--load-connections n] [--latency ms]\n' +
      `  [--scenarios ${SCENARIO_NAMES.join(',')}] [--passes ${PASS_NAMES.join(',')}] [--repeat n] [--baselines 0|1]\n` +
      '  [--gateway-node-args="--cpu-prof --cpu-prof-dir=prof"] [--gateway-env \'{"UPSTREAM_CONNECTIONS":"128"}\']\n' +
      '  [--gateway-script /path/to/other/dist/main.js] [--previous /path/to/previous/dist/main.js]\n' +
      '  [--previous-node /path/to/other/bin/node (runs --previous; default this node)]\n' +
      '  [--out file.md] [--json file.json]\n' +
      `  [--session-duration s (${DEFAULT_SESSION.durationSeconds})] [--session-interval s (${DEFAULT_SESSION.intervalSeconds})]` +
      ` [--session-users n (${DEFAULT_SESSION.users})] [--session-rate-limit per minute (${DEFAULT_SESSION.rateLimit})]` +
      ' [--redis-server path]\n' +
      `  [--floor-previous /path/to/previous/dist/main.js] [--floor-connections n (${FLOOR_CONNECTIONS})]\n` +
      `  [--live-subscribers n (${DEFAULT_LIVE.subscribers})] [--live-interval s (${DEFAULT_LIVE.intervalSeconds})]` +
      ` [--live-intervals n (${DEFAULT_LIVE.countIntervals})] [--live-changes n (${DEFAULT_LIVE.changes})]\n` +
      `  [--scale-gateways ${DEFAULT_SCALE.gateways.join(',')}] [--scale-keys n (${DEFAULT_SCALE.keys})]` +
      ` [--scale-connections n (${DEFAULT_SCALE.connections})] [--redis-cli path]\n` +
      '\n' +
      `Passes (default ${DEFAULT_PASS_NAMES.join(',')},floor; floor only when the dashboard is among --scenarios):\n` +
      '  main      every scenario, --latency ms sandbox, --connections connections\n' +
      '  light     website, dashboard and rich dashboard at 1 connection (latency without queueing)\n' +
      "  overhead  website and dashboard at 0 ms sandbox, 1 connection (the gateway's own cost)\n" +
      '  load      dashboard and list at --load-connections (throughput, peak RSS)\n' +
      "--previous: another build's main.js (relative to the project root or absolute; it must find its node_modules),\n" +
      '  started once next to the gateway (same environment and node flags, same sandbox) and measured in each of\n' +
      '  these passes right after the gateway, scenario by scenario, with the same runs (--repeat): its row under\n' +
      "  the gateway's, its peak RSS after each pass, this build ÷ previous build per scenario (req/s, p50, CPU\n" +
      "  ms/req); the floor pass's previous build too, unless --floor-previous is given\n" +
      "The read cache's passes, only when named in --passes:\n" +
      '  cache     the dashboard over a settled range (30 days to yesterday), CACHE=on warmed by one request\n' +
      '            against CACHE=off: upstream calls per request (target 0) and p50, at 1 and --connections\n' +
      '  session   --session-users users on one key, sandbox limited to --session-rate-limit requests a minute\n' +
      '            per key (SANDBOX_RATE_LIMIT), each opening the dashboard then switching every\n' +
      '            --session-interval s between 3 settled ranges and 1 reaching today, for --session-duration s;\n' +
      '            CACHE=off then CACHE=on: answers with data, RATE_LIMITED errors, stale answers\n' +
      '  shared    a redis-server on a free port, two gateways with REDIS_URL on it: upstream calls of the\n' +
      "            first gateway's first dashboard, then of the second's (target 0)\n" +
      'The floor pass, in every run without --passes (when the dashboard is among --scenarios), or named:\n' +
      `  floor     the dashboard at 0 ms sandbox, ${FLOOR_CONNECTIONS} connections (--floor-connections), alternately through the gateway\n` +
      '            (CACHE=off, its request log on), dist-bench/bench/floor-gateway.js (a minimal gateway on the same\n' +
      '            stack: a yardstick, not the product), dist-bench/bench/aggregator.js (the dashboard by hand:\n' +
      '            node:http, one undici Pool, no GraphQL) and Hive Gateway over an OpenAPI source\n' +
      '            (bench/hive-gateway.ts, composed at bench time),\n' +
      `            max(3, --repeat) runs each: medians of req/s and CPU ms/req (targets: gateway ÷ floor req/s >=\n` +
      `            ${FLOOR_TARGETS.requestsPerSecondRatio}, CPU <= ${FLOOR_TARGETS.cpuRatio}; Hive Gateway ÷ gateway CPU >= ${FLOOR_TARGETS.hiveCpuRatio}; ` +
      `gateway ÷ Hive Gateway req/s >= ${FLOOR_TARGETS.hiveRequestsPerSecondRatio}; gateway ÷ aggregator CPU <= ` +
      `${FLOOR_TARGETS.aggregatorCpuRatio})\n` +
      "            --floor-previous: another build's main.js (relative to the project root or absolute; inside the\n" +
      '            project, so it finds node_modules), started like the gateway (same environment, CACHE=off, same node\n' +
      '            args) and measured in the same alternation (gateway, previous, floor…): a third row "previous (…)",\n' +
      '            its ratios to the floor, and gateway ÷ previous (this build against the previous one, same run);\n' +
      '            without --floor-previous, --previous if given\n' +
      'The stored pass, with the floor pass in every run without --passes, or named:\n' +
      '  stored    the repeated dashboard through a CACHE=on gateway (its stored answer: src/cache/stored-answers.ts) and\n' +
      '            through dist-bench/bench/static-server.js (node:http sending the same bytes, a yardstick), and with\n' +
      '            --redis-server (default redis-server) through a second gateway on one Redis with the one that stored\n' +
      '            it; 0 ms sandbox, 20 connections, max(3, --repeat) runs each, alternately: medians of req/s and CPU\n' +
      `            ms/req, stored ÷ static (target: CPU ratio <= ${STORED_TARGETS.cpuRatio}; the req/s ratio for information);\n` +
      '            --floor-previous too, its stored answer, with the floor pass or alone\n' +
      'The live pass, only when named in --passes (not by default: it measures subscriptions, not the query path):\n' +
      '  live      --live-subscribers graphql-sse streams (one socket each) on one key and one document (website 1 and\n' +
      '            four statistics of today) through a gateway of its own (LIVE_INTERVAL_S=--live-interval, the budget and\n' +
      '            the stream bounds out of the way, --inspect for a forced GC), --latency sandbox: upstream calls per poll\n' +
      '            over --live-intervals intervals against one execution as a query (target: equal); --live-changes\n' +
      '            POST /__sandbox/traffic, the delay to the event at every subscriber (target: p99 <= interval + upstream\n' +
      `            round trip + ${LIVE_TARGETS.marginMs} ms); RSS and heap per open stream; the dashboard's p50 at --connections with the\n` +
      `            streams open and with none, --repeat rounds (target: open / none <= ${LIVE_TARGETS.p50Ratio})\n` +
      'The scale pass, only when named in --passes (it starts a Redis Cluster and up to 4 gateways more):\n' +
      '  scale     for one Redis, then a Redis Cluster of 3 masters and 3 replicas (--redis-server, --redis-cli), and for\n' +
      '            each of --scale-gateways: the store emptied, that many gateways (CACHE=on, REDIS_URL on it), the\n' +
      "            sandbox's --scale-keys tenant keys (SANDBOX_TENANT_KEYS) at --latency: each key's first dashboard\n" +
      '            (key i through gateway i mod N), then the same dashboards for --warmup and --duration s from\n' +
      '            --scale-connections clients shared by the gateways, each going through the keys in turn: per dashboard\n' +
      "            the gateways' CPU, upstream calls, Redis commands and bytes (INFO of every master), p50/p99, each\n" +
      "            master's share of the commands; cluster ÷ one Redis\n",
  );
  process.exit(0);
}
const env = process.env;
const pick = (flag: string | undefined, variable: string): string | undefined => flag ?? (env[variable]?.trim() || undefined);

const scenarios = list<ScenarioName>('scenarios', pick(values.scenarios, 'BENCH_SCENARIOS'), SCENARIO_NAMES);
const latencyMs = number('latency', pick(values.latency, 'BENCH_LATENCY_MS'), 20, 0);
const connections = number('connections', pick(values.connections, 'BENCH_CONNECTIONS'), 10, 1);
const wanted = list('passes', pick(values.passes, 'BENCH_PASSES'), PASS_NAMES);
const passes = defaultPasses({
  latencyMs,
  connections,
  loadConnections: number('load-connections', pick(values['load-connections'], 'BENCH_LOAD_CONNECTIONS'), 100, 1),
  ...(scenarios ? { scenarios } : {}),
  ...(wanted ? { passes: wanted } : {}),
});
const caching = cachingPasses(wanted ?? [], {
  latencyMs,
  connections,
  session: {
    durationSeconds: number(
      'session-duration',
      pick(values['session-duration'], 'BENCH_SESSION_DURATION'),
      DEFAULT_SESSION.durationSeconds,
      0.1,
    ),
    intervalSeconds: number(
      'session-interval',
      pick(values['session-interval'], 'BENCH_SESSION_INTERVAL'),
      DEFAULT_SESSION.intervalSeconds,
      0.01,
    ),
    users: Math.round(number('session-users', pick(values['session-users'], 'BENCH_SESSION_USERS'), DEFAULT_SESSION.users, 1)),
    rateLimit: Math.round(
      number('session-rate-limit', pick(values['session-rate-limit'], 'BENCH_SESSION_RATE_LIMIT'), DEFAULT_SESSION.rateLimit, 1),
    ),
  },
  redisServer: pick(values['redis-server'], 'BENCH_REDIS_SERVER') ?? 'redis-server',
});
const repeat = Math.round(number('repeat', pick(values.repeat, 'BENCH_REPEAT'), 1, 1));
// Resolved as the harness resolves --gateway-script: relative to the project root, or absolute.
const mustExist = (name: string, script: string): void => {
  if (!existsSync(fileURLToPath(new URL(script, `file://${PROJECT_ROOT}`)))) fail(`${name}: ${script} does not exist`);
};
// Without --passes the floor pass runs too, so that every full report has the ratios to the floor.
const floorRuns = wanted ? wanted.includes('floor') : scenarios === undefined || scenarios.includes('dashboard');
const floorPrevious = pick(values['floor-previous'], 'BENCH_FLOOR_PREVIOUS');
const storedRuns = wanted ? wanted.includes('stored') : floorRuns;
if (floorPrevious !== undefined) {
  if (!floorRuns && !storedRuns) fail('floor-previous is measured by the floor and stored passes only: add floor or stored to --passes');
  mustExist('floor-previous', floorPrevious);
}
const previous = pick(values.previous, 'BENCH_PREVIOUS');
if (previous !== undefined) {
  if (passes.length === 0 && !floorRuns) {
    fail('previous is measured by the scenario passes (main, light, overhead, load) and the floor pass: none of them runs');
  }
  mustExist('previous', previous);
}
const previousNode = pick(values['previous-node'], 'BENCH_PREVIOUS_NODE');
if (previousNode !== undefined) {
  if (previous === undefined) fail('previous-node runs the previous build: give --previous too');
  mustExist('previous-node', previousNode);
}
// Without --floor-previous, the floor pass measures --previous (runBench falls back on it).
// Issue 60 measured its aggregator ratio at 8 connections; the floor pass's targets are at 20.
const floorConnections = Math.round(
  number('floor-connections', pick(values['floor-connections'], 'BENCH_FLOOR_CONNECTIONS'), FLOOR_CONNECTIONS, 1),
);
const floor = floorPass(floorRuns ? ['floor'] : [], {
  repeat,
  connections: floorConnections,
  ...(floorPrevious !== undefined ? { previousScript: floorPrevious } : {}),
});
// The stored pass runs with the floor pass when no --passes are given, so that both sit side by side.
const stored = storedPass(storedRuns ? ['stored'] : [], {
  repeat,
  ...(floorPrevious !== undefined ? { previousScript: floorPrevious } : {}),
  redisServer: pick(values['redis-server'], 'BENCH_REDIS_SERVER') ?? 'redis-server',
});
const live = livePass(wanted ?? [], {
  latencyMs,
  connections,
  subscribers: Math.round(
    number('live-subscribers', pick(values['live-subscribers'], 'BENCH_LIVE_SUBSCRIBERS'), DEFAULT_LIVE.subscribers, 1),
  ),
  // LIVE_INTERVAL_S takes at most 3 decimals, from 0.1.
  intervalSeconds:
    Math.round(number('live-interval', pick(values['live-interval'], 'BENCH_LIVE_INTERVAL'), DEFAULT_LIVE.intervalSeconds, 0.1) * 1000) /
    1000,
  countIntervals: Math.round(
    number('live-intervals', pick(values['live-intervals'], 'BENCH_LIVE_INTERVALS'), DEFAULT_LIVE.countIntervals, 1),
  ),
  changes: Math.round(number('live-changes', pick(values['live-changes'], 'BENCH_LIVE_CHANGES'), DEFAULT_LIVE.changes, 0)),
});
const gatewayCounts = pick(values['scale-gateways'], 'BENCH_SCALE_GATEWAYS');
const scale = scalePass(wanted ?? [], {
  latencyMs,
  ...(gatewayCounts !== undefined
    ? { gateways: gatewayCounts.split(',').map((item) => Math.round(number('scale-gateways', item.trim(), 0, 1))) }
    : {}),
  keys: Math.round(number('scale-keys', pick(values['scale-keys'], 'BENCH_SCALE_KEYS'), DEFAULT_SCALE.keys, 1)),
  connections: Math.round(
    number('scale-connections', pick(values['scale-connections'], 'BENCH_SCALE_CONNECTIONS'), DEFAULT_SCALE.connections, 1),
  ),
  redisServer: pick(values['redis-server'], 'BENCH_REDIS_SERVER') ?? 'redis-server',
  redisCli: pick(values['redis-cli'], 'BENCH_REDIS_CLI') ?? 'redis-cli',
});
if (scale.scale && scale.scale.keys > MAX_TENANT_KEYS) fail(`scale-keys must be at most ${MAX_TENANT_KEYS}`);
if (
  passes.length === 0 &&
  !caching.cachePass &&
  !caching.session &&
  !caching.shared &&
  !floor.floor &&
  !stored.stored &&
  !live.live &&
  !scale.scale
) {
  fail('no pass has a scenario to run: check --scenarios and --passes');
}

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
  repeat,
  baselines: pick(values.baselines, 'BENCH_BASELINES') !== '0',
  passes,
  ...caching,
  ...floor,
  ...stored,
  ...live,
  ...scale,
  gatewayEnv,
  gatewayNodeArgs: (pick(values['gateway-node-args'], 'BENCH_GATEWAY_NODE_ARGS') ?? '').split(/\s+/).filter(Boolean),
  gatewayScript: pick(values['gateway-script'], 'BENCH_GATEWAY_SCRIPT') ?? 'dist/main.js',
  ...(previous !== undefined ? { previousScript: previous } : {}),
  ...(previousNode !== undefined ? { previousNode } : {}),
  log: (line) => process.stderr.write(`${line}\n`),
});
const markdown = formatReport(report);
process.stdout.write(markdown);
const out = pick(values.out, 'BENCH_OUT');
if (out) writeFileSync(out, markdown);
const json = pick(values.json, 'BENCH_JSON');
if (json) writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
