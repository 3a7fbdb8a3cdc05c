// runBench: the sandbox and the gateway as separate processes, each scenario driven through the
// gateway by autocannon and straight against the REST API by two baselines (sequential and
// parallel), with upstream calls counted by the sandbox and the gateway's CPU and memory read from /proc.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { loadConfig } from '../src/config.js';
import { LOG_FLUSH_MS } from '../src/log.js';
import { dayIn } from '../src/analytics/calendar.js';
import { tenantKey } from '../src/sandbox/demo-data.js';
import {
  DEFAULT_SESSION,
  runSessionPass,
  runSharedPass,
  settledContext,
  type GatewayStarter,
  type SessionOptions,
  type SessionPassResult,
  type SharedOptions,
  type SharedPassResult,
} from './caching.js';
import { DEFAULT_LIVE, runLivePass, type LivePassOptions, type LivePassResult } from './live.js';
import { runScalePass, type ScalePassOptions, type ScalePassResult } from './scale.js';
import { STATIC_SCRIPT, runStoredPass, type StoredPassOptions, type StoredPassResult } from './stored.js';
import { dashboardRows, hiveDashboardBody, startHiveGateway } from './hive-gateway.js';
import { runGatewayLoad, runRestLoad, sizedAmount, type LoadResult } from './load.js';
import { cpuTimeMs, memoryMb, sampleRss, spawnServer, until, type ChildServer } from './processes.js';
import { RestClient, SandboxControl, type LogEntry } from './rest.js';
import {
  LIST_SIZE,
  SCENARIOS,
  SCENARIO_NAMES,
  type ChainContext,
  type GraphqlStep,
  type RestMode,
  type Scenario,
  type ScenarioContext,
  type ScenarioName,
} from './scenarios.js';
import { maxOf, median, percentiles } from './percentiles.js';
import { countWaves } from './waves.js';

export const DEMO_KEY = 'sandbox-key-1';

export interface PassOptions {
  /** Shown in the report, e.g. "main". */
  name: string;
  /** Sandbox latency added to every REST answer. */
  latencyMs: number;
  /** Concurrent connections of autocannon, and concurrent workers of the baselines. */
  connections: number;
  scenarios: readonly ScenarioName[];
}

export interface BenchOptions {
  /** Seconds of each measured run (gateway, sequential, parallel). */
  durationSeconds: number;
  /** Seconds of warm-up before each measured run (not measured). */
  warmupSeconds: number;
  /** Measured runs of each client per scenario; the table shows medians. */
  repeat: number;
  passes: readonly PassOptions[];
  /** Measure the REST baselines (sequential and parallel) too. */
  baselines: boolean;
  /** Extra environment of the gateway process, e.g. { UPSTREAM_CONNECTIONS: '128' }. */
  gatewayEnv: Record<string, string>;
  /** Extra node flags of the gateway process, e.g. ['--cpu-prof', '--cpu-prof-dir=prof']. */
  gatewayNodeArgs: readonly string[];
  /** The gateway's entry point, relative to the project root or absolute (to compare builds); default dist/main.js. */
  gatewayScript: string;
  /**
   * Another build's main.js (relative to the project root or absolute, like gatewayScript): a second gateway
   * started from it next to the harness's gateway (same environment and node flags, same sandbox) and measured
   * in every scenario pass right after the gateway, scenario by scenario, with the same runs (repeat); the
   * floor pass's previous build too when `floor.previousScript` is not set. Absent: not measured.
   */
  previousScript?: string;
  /**
   * The node binary that runs the previous build (previousScript); default the harness's own. With the
   * same script as gatewayScript: one build under two Node versions, alternating in the same run.
   */
  previousNode?: string;
  /** Keep-alive sockets of the baselines' client; default: the gateway's UPSTREAM_CONNECTIONS. */
  restConnections?: number;
  /** The `cache` pass (warm dashboard, CACHE=on, against CACHE=off); not run when absent. */
  cachePass?: CachePassOptions | null;
  /** The `session` pass (a session mix against a rate-limited sandbox, cache on and off); not run when absent. */
  session?: SessionOptions | null;
  /** The `shared` pass (two gateways on one Redis); not run when absent. */
  shared?: SharedOptions | null;
  /** The `floor` pass (the gateway against dist-bench/bench/floor-gateway.js, a minimal gateway); not run when absent. */
  floor?: FloorPassOptions | null;
  /** The `live` pass (many subscribers of one live dashboard on a gateway of its own); not run when absent. */
  live?: LivePassOptions | null;
  /** The `stored` pass (the repeated dashboard's stored answer against a static server); not run when absent. */
  stored?: StoredPassOptions | null;
  /** The `scale` pass (N gateways on one Redis and on a Redis Cluster, many keys); not run when absent. */
  scale?: ScalePassOptions | null;
  /**
   * The harness's pauses, in ms: the quiet spell the sandbox must see before a measured run (no call
   * in flight, none arriving), and the wait after a forced GC before memory is read. Default 300; the
   * smoke tests take 50.
   */
  quietMs: number;
  /** Progress lines (the CLI sends them to stderr). */
  log(line: string): void;
}

export interface DefaultPassOptions {
  latencyMs?: number;
  connections?: number;
  /** Connections of the load pass (the RSS target). */
  loadConnections?: number;
  scenarios?: readonly ScenarioName[];
  /**
   * Which passes: main (every scenario, 20 ms, 10 connections), light (website and dashboard, 20 ms,
   * 1 connection: latency without queueing), overhead (the same at 0 ms: the gateway's own cost),
   * load (dashboard and list at 100 connections: throughput and memory). The read cache's passes
   * (cache, session, shared) are not scenario passes: `cachingPasses` makes their options.
   */
  passes?: readonly PassName[];
}

/** Every pass `--passes` knows. */
export const PASS_NAMES = ['main', 'light', 'overhead', 'load', 'cache', 'session', 'shared', 'floor', 'stored', 'live', 'scale'] as const;
export type PassName = (typeof PASS_NAMES)[number];
/** The passes of a run without `--passes`: the read cache's passes run only when selected. */
export const DEFAULT_PASS_NAMES = ['main', 'light', 'overhead', 'load'] as const satisfies readonly PassName[];
type ScenarioPassName = (typeof DEFAULT_PASS_NAMES)[number];
const isScenarioPass = (name: PassName): name is ScenarioPassName => (DEFAULT_PASS_NAMES as readonly string[]).includes(name);

export function defaultPasses(options: DefaultPassOptions = {}): PassOptions[] {
  const only = (names: readonly ScenarioName[]): ScenarioName[] =>
    names.filter((name) => options.scenarios === undefined || options.scenarios.includes(name));
  const latencyMs = options.latencyMs ?? 20;
  const all: Record<ScenarioPassName, PassOptions> = {
    main: { name: 'main', latencyMs, connections: options.connections ?? 10, scenarios: only(SCENARIO_NAMES) },
    light: { name: 'light', latencyMs, connections: 1, scenarios: only(['website', 'dashboard', 'dashboard-rich']) },
    overhead: { name: 'overhead', latencyMs: 0, connections: 1, scenarios: only(['website', 'dashboard']) },
    load: { name: 'load', latencyMs, connections: options.loadConnections ?? 100, scenarios: only(['dashboard', 'websites-list']) },
  };
  return (options.passes ?? DEFAULT_PASS_NAMES)
    .filter(isScenarioPass)
    .map((name) => all[name])
    .filter((pass) => pass.scenarios.length > 0);
}

/** The `cache` pass: the dashboard on a settled range through a CACHE=off gateway (cold) and a warmed CACHE=on one. */
export interface CachePassOptions {
  latencyMs: number;
  /** Connections of each measured run, e.g. [1, 10]. */
  connections: readonly number[];
}

export interface CachingPassOptions {
  latencyMs?: number;
  /** The cache pass measures at 1 connection and at this many (default 10). */
  connections?: number;
  session?: Partial<SessionOptions>;
  /** The redis-server program of the shared pass (default: redis-server on the PATH). */
  redisServer?: string;
}

/** The options of the read cache's passes named in `names` (the others stay off). */
export function cachingPasses(
  names: readonly PassName[],
  options: CachingPassOptions = {},
): Pick<BenchOptions, 'cachePass' | 'session' | 'shared'> {
  const latencyMs = options.latencyMs ?? 20;
  const connections = options.connections ?? 10;
  return {
    cachePass: names.includes('cache') ? { latencyMs, connections: connections === 1 ? [1] : [1, connections] } : null,
    session: names.includes('session') ? { ...DEFAULT_SESSION, latencyMs, ...options.session } : null,
    shared: names.includes('shared') ? { latencyMs, redisServer: options.redisServer ?? 'redis-server' } : null,
  };
}

/**
 * The `floor` pass: the dashboard alternately through the harness's gateway (CACHE=off, its request log on)
 * and through dist-bench/bench/floor-gateway.js (a minimal gateway on the same stack, a yardstick only), and
 * with `hiveGateway` through Hive Gateway over an OpenAPI source (bench/hive-gateway.ts, another yardstick), `rounds`
 * runs each; with `previousScript`, through another build's gateway too (gateway, previous, floor, Hive, …).
 */
export interface FloorPassOptions {
  /** Sandbox latency (0: the gateways' own cost decides throughput). */
  latencyMs: number;
  connections: number;
  /** Measured runs of each, alternating gateway, floor, Hive Gateway, gateway… (gateway, previous, floor… with previousScript). */
  rounds: number;
  /** Hive Gateway over an OpenAPI source of the same two REST reads, composed at bench time, in the same alternation. */
  hiveGateway: boolean;
  /**
   * Another build's main.js (relative to the project root or absolute, like gatewayScript), started like
   * the harness's gateway (same environment, CACHE=off, same node flags) and measured in the same
   * alternation: this build against the previous one in the same run. Absent: not measured.
   */
  previousScript?: string;
}

/**
 * Targets of the floor pass (issue 47), the gateway with its default settings (its request log on):
 * gateway ÷ floor, req/s at least 1.3 and CPU per request at most 0.7; Hive Gateway's CPU per request at
 * least 4 times the gateway's (Hive ÷ gateway), and the gateway's req/s at least 4 times Hive Gateway's.
 */
export const FLOOR_TARGETS = {
  requestsPerSecondRatio: 1.3,
  cpuRatio: 0.7,
  hiveCpuRatio: 4,
  hiveRequestsPerSecondRatio: 4,
  /** Issue 60: the gateway's CPU per uncached dashboard at most 1.3 times the hand-written aggregator's. */
  aggregatorCpuRatio: 1.3,
} as const;

/** The floor pass's clients, the stored pass's too: issue 47's targets are stated at 20. */
export const FLOOR_CONNECTIONS = 20;

/** The floor pass's options when `floor` is among `names`: 0 ms, FLOOR_CONNECTIONS, max(3, repeat) runs each, Hive Gateway too. */
export function floorPass(
  names: readonly PassName[],
  options: { repeat?: number; connections?: number; latencyMs?: number; previousScript?: string; hiveGateway?: boolean } = {},
): Pick<BenchOptions, 'floor'> {
  if (!names.includes('floor')) return { floor: null };
  return {
    floor: {
      latencyMs: options.latencyMs ?? 0,
      connections: options.connections ?? FLOOR_CONNECTIONS,
      rounds: Math.max(3, options.repeat ?? 1),
      hiveGateway: options.hiveGateway ?? true,
      ...(options.previousScript ? { previousScript: options.previousScript } : {}),
    },
  };
}

/**
 * The `stored` pass's options when `stored` is among `names`: 0 ms sandbox, FLOOR_CONNECTIONS (the floor
 * pass's), max(3, repeat) runs each, and two gateways on one Redis when `redisServer` is not null.
 */
export function storedPass(
  names: readonly PassName[],
  options: { repeat?: number; connections?: number; redisServer?: string | null; previousScript?: string } = {},
): Pick<BenchOptions, 'stored'> {
  if (!names.includes('stored')) return { stored: null };
  return {
    stored: {
      latencyMs: 0,
      connections: options.connections ?? FLOOR_CONNECTIONS,
      rounds: Math.max(3, options.repeat ?? 1),
      redisServer: options.redisServer === undefined ? 'redis-server' : options.redisServer,
      ...(options.previousScript !== undefined ? { previousScript: options.previousScript } : {}),
    },
  };
}

/**
 * The `live` pass's options when `live` is among `names` (it runs only when named): --latency, --connections,
 * and its own figures (DEFAULT_LIVE: 1,000 subscribers, LIVE_INTERVAL_S=2, calls counted over 5 intervals, 10 changes).
 */
export function livePass(names: readonly PassName[], options: Partial<LivePassOptions> = {}): Pick<BenchOptions, 'live'> {
  if (!names.includes('live')) return { live: null };
  return { live: { latencyMs: 20, connections: 10, ...DEFAULT_LIVE, ...options } };
}

/** The scale pass's defaults: 2 and 4 gateways, 1,000 keys, 32 clients, a 20 ms sandbox. */
export const DEFAULT_SCALE = { gateways: [2, 4], keys: 1_000, connections: 32, latencyMs: 20 } as const;

/**
 * The `scale` pass's options when `scale` is among `names` (it runs only when named): DEFAULT_SCALE and
 * what is given, the Redis programs (redis-server, redis-cli) by default from the PATH.
 */
export function scalePass(names: readonly PassName[], options: Partial<ScalePassOptions> = {}): Pick<BenchOptions, 'scale'> {
  if (!names.includes('scale')) return { scale: null };
  return { scale: { ...DEFAULT_SCALE, redisServer: 'redis-server', redisCli: 'redis-cli', ...options } };
}

export const DEFAULT_OPTIONS: BenchOptions = {
  durationSeconds: 10,
  warmupSeconds: 2,
  repeat: 1,
  passes: defaultPasses(),
  baselines: true,
  gatewayEnv: {},
  gatewayNodeArgs: [],
  gatewayScript: 'dist/main.js',
  quietMs: 300,
  log: () => undefined,
};

export type ClientKind = 'gateway' | 'sequential' | 'parallel';

export interface Measurement {
  client: ClientKind;
  /** Medians over the repeated runs (sums for requests and errors). */
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** Upstream calls counted by the sandbox, per (GraphQL or equivalent) request: retried attempts included. */
  upstreamCallsPerRequest: number;
  /**
   * Gateway only: the calls each answer says it made (`extensions.upstreamCalls`: one per read, however many
   * attempts it took), per request; null where the answers do not say (the REST baselines, the floor).
   */
  reportedCallsPerRequest: number | null;
  /**
   * Gateway only: calls the sandbox received beyond those the answers report, over the runs: reads tried
   * again (a 502/503/504, or a connection that broke); null where the answers do not say.
   */
  retriedCalls: number | null;
  /** Gateway only: how many answers reported each number of calls, over the runs (`{ "7": 240 }`); null as above. */
  answersByCalls: Record<string, number> | null;
  /** Gateway only: user + system CPU time per request. */
  cpuMsPerRequest: number | null;
  /**
   * Gateway only: bytes the process wrote to its stdout per request (the gateway's request log; the
   * harness reads and drops them); null where not counted.
   */
  outputBytesPerRequest: number | null;
  /** Gateway only: largest VmRSS sampled during the runs. */
  peakRssMb: number | null;
  /** The sandbox's CPU time per upstream call it answered (it shares the machine's cores). */
  sandboxCpuMsPerCall: number | null;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  number: number;
  title: string;
  expectedCalls: number;
  gateway: Measurement;
  sequential: Measurement | null;
  parallel: Measurement | null;
  /** The gateway made the same REST calls as the baselines (one request of each, compared in the sandbox log). */
  sameCalls: boolean | null;
  /**
   * Successive waves of upstream calls of the check request made again, its key known (bench/waves.ts): 1
   * when every call started together. null at 0 ms sandbox latency, where waves cannot be told apart, and
   * for chains of requests.
   */
  waves: number | null;
  notes: string[];
  /** The previous build (BenchOptions.previousScript), measured right after the gateway; only when given. */
  previous?: PreviousScenarioResult;
}

/** A scenario through the previous build's gateway (BenchOptions.previousScript), measured like the gateway. */
export interface PreviousScenarioResult {
  /** Medians over the repeated runs, as the gateway's (client 'gateway': CPU and RSS are the previous build's process). */
  measurement: Measurement;
  /** It made the same REST calls as this build's gateway (one chain of each, compared in the sandbox log). */
  sameCalls: boolean;
  /** This build ÷ the previous build, medians of this run: req/s (above 1: faster), p50 and CPU ms/req (below 1: faster, cheaper). */
  ratios: { requestsPerSecond: number; p50: number; cpuMsPerRequest: number };
  notes: string[];
}

export interface PassResult extends PassOptions {
  results: ScenarioResult[];
  /** The gateway's VmHWM after the pass: its peak RSS since it started. */
  gatewayPeakRssMb: number | null;
  /** The previous build's VmHWM after the pass (BenchOptions.previousScript); only when given. */
  previousPeakRssMb?: number | null;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  os: string;
  memoryGb: number;
  /** 1-minute load average at the start and the end of the run. */
  loadAverage: [number, number];
}

/** One row of the cache pass: the settled-range dashboard through a gateway with the cache off or on (warm). */
export interface CacheRow {
  cache: 'off' | 'on';
  connections: number;
  measurement: Measurement;
  /** Upstream calls the sandbox counted over the measured runs (all repeats). */
  upstreamCalls: number;
  /** CACHE=on: upstream calls of the request that filled the fresh gateway's cache, and of the one after it. */
  fillCalls: number | null;
  secondCalls: number | null;
  /** CACHE=on: seconds from the fill to the end of the last measured run. */
  warmSeconds: number | null;
}

export interface CachePassResult {
  latencyMs: number;
  /** The dashboard's range in this pass: the 30 days ending yesterday (settled). */
  from: string;
  to: string;
  /** The sandbox's today, and the gateway's (UPSTREAM_TIMEZONE, the clock): a range ending before the latter is settled. */
  sandboxToday: string;
  gatewayToday: string;
  rows: CacheRow[];
  /** The largest VmHWM of the warm gateways at the end of their runs. */
  warmPeakRssMb: number | null;
  notes: string[];
}

export interface BenchReport {
  startedAt: string;
  seconds: number;
  machine: MachineInfo;
  durationSeconds: number;
  warmupSeconds: number;
  repeat: number;
  gatewayEnv: Record<string, string>;
  gatewayScript: string;
  /** BenchOptions.previousScript, when given. */
  previousScript?: string;
  /** The version (`node --version`) of BenchOptions.previousNode, when given. */
  previousNode?: string;
  passes: PassResult[];
  /** The read cache's passes, when they ran. */
  cache?: CachePassResult;
  session?: SessionPassResult;
  shared?: SharedPassResult;
  /** The floor pass, when it ran. */
  floor?: FloorPassResult;
  /** The live pass, when it ran. */
  live?: LivePassResult;
  /** The stored pass, when it ran. */
  stored?: StoredPassResult;
  /** The scale pass, when it ran. */
  scale?: ScalePassResult;
}

/** One measured run of the floor pass. */
export interface FloorRun {
  requestsPerSecond: number;
  cpuMsPerRequest: number | null;
}

export interface FloorPassResult extends FloorPassOptions {
  /** Medians over the rounds (sums for requests and errors). */
  gateway: Measurement;
  floor: Measurement;
  /** Each run, in the order measured (gateway then floor, round after round). */
  runs: { gateway: FloorRun[]; floor: FloorRun[] };
  /** Median req/s of the gateway ÷ the floor's (target ≥ FLOOR_TARGETS.requestsPerSecondRatio). */
  requestsPerSecondRatio: number;
  /** Median CPU ms per request of the gateway ÷ the floor's (target ≤ FLOOR_TARGETS.cpuRatio). */
  cpuRatio: number;
  /** Hive Gateway over OpenAPI (FloorPassOptions.hiveGateway), when it was measured. */
  hive?: FloorHiveResult;
  /** One dashboard through each answered the same `data`; null when a check request failed. */
  sameData: boolean | null;
  /** Upstream calls of one dashboard through each (the check request). */
  checkCalls: { gateway: number; floor: number };
  /** The floor's VmHWM at the end of the pass. */
  floorPeakRssMb: number | null;
  /** The previous build's gateway (previousScript), when given. */
  previous?: FloorPreviousResult;
  /** The hand-written REST aggregator (dist-bench/bench/aggregator.js), measured in the same alternation. */
  aggregator?: FloorAggregatorResult;
  notes: string[];
}

/** The floor pass's figures of the hand-written aggregator: the job's own cost, with no GraphQL. */
export interface FloorAggregatorResult {
  /** Medians over the rounds (sums for requests and errors). */
  measurement: Measurement;
  /** Each run, in the order measured. */
  runs: FloorRun[];
  /** Median CPU ms per request of the gateway ÷ the aggregator's (target ≤ FLOOR_TARGETS.aggregatorCpuRatio). */
  gatewayCpuRatio: number;
  /** Median req/s of the gateway ÷ the aggregator's. */
  gatewayRequestsPerSecondRatio: number;
  /** One dashboard through it answered the same `data` as through the gateway; null when a check request failed. */
  sameData: boolean | null;
  /** Upstream calls of one dashboard through it (the check request). */
  checkCalls: number;
  /** Its VmHWM at the end of the pass. */
  peakRssMb: number | null;
}

/** The floor pass's figures of Hive Gateway over an OpenAPI source (FloorPassOptions.hiveGateway), measured in the same alternation. */
export interface FloorHiveResult {
  /** Medians over the rounds (sums for requests and errors). */
  measurement: Measurement;
  /** Each run, in the order measured. */
  runs: FloorRun[];
  /** Median CPU ms per request of Hive Gateway ÷ the gateway's (target ≥ FLOOR_TARGETS.hiveCpuRatio). */
  hiveCpuRatio: number;
  /** Median req/s of the gateway ÷ Hive Gateway's (target ≥ FLOOR_TARGETS.hiveRequestsPerSecondRatio). */
  gatewayRequestsPerSecondRatio: number;
  /** Hive Gateway ÷ the floor: median CPU ms per request, and median req/s. */
  floorCpuRatio: number;
  floorRequestsPerSecondRatio: number;
  /** Its dashboard had the gateway's website domain and statistics rows; null when a check request failed. */
  sameData: boolean | null;
  /** Upstream calls of one dashboard through it (the check request). */
  checkCalls: number;
  /** Its VmHWM at the end of the pass. */
  peakRssMb: number | null;
}

/** The floor pass's figures of the previous build (FloorPassOptions.previousScript), measured in the same alternation. */
export interface FloorPreviousResult {
  /** Medians over the rounds (sums for requests and errors). */
  measurement: Measurement;
  /** Each run, in the order measured. */
  runs: FloorRun[];
  /** Median req/s of the previous build ÷ the floor's. */
  requestsPerSecondRatio: number;
  /** Median CPU ms per request of the previous build ÷ the floor's. */
  cpuRatio: number;
  /** This build against the previous one, same run: the gateway's median req/s ÷ the previous build's. */
  gatewayRequestsPerSecondRatio: number;
  /** The gateway's median CPU ms per request ÷ the previous build's. */
  gatewayCpuRatio: number;
  /** One dashboard through it answered the same `data` as through the gateway and the floor; null when a check request failed. */
  sameData: boolean | null;
  /** Upstream calls of one dashboard through it (the check request). */
  checkCalls: number;
  /** Its VmHWM at the end of the pass. */
  peakRssMb: number | null;
}

export async function runBench(partial: Partial<BenchOptions> = {}): Promise<BenchReport> {
  const options: BenchOptions = { ...DEFAULT_OPTIONS, ...partial };
  const { log } = options;
  const startedAt = new Date();
  const load0 = loadavg()[0] ?? 0;
  const runId = startedAt.getTime().toString(36);
  // Domains of this run's websites: `bench-<run>-list<n>` for the list scenario, `bench-<run>-w<n>` for the writes.
  const marker = `bench-${runId}-`;
  let domains = 0;
  const domain = (kind: 'list' | 'w'): string => `${marker}${kind}${++domains}.example.com`;

  const children: ChildServer[] = [];
  let control: SandboxControl | undefined;
  let rest: RestClient | undefined;
  const onSignal = (): void => {
    for (const child of children) void child.stop();
  };
  process.once('exit', onSignal);
  try {
    const firstLatency = options.passes[0]?.latencyMs ?? 20;
    log(`starting the sandbox (${firstLatency} ms) and the gateway…`);
    const sandbox = await spawnServer({
      script: 'dist/sandbox/main.js',
      // Today pinned (the real UTC date): its figures stay at the full day's, as before they grew with the
      // clock (a32442b). Growing, two servers asked a minute apart would answer other data (the floor pass
      // compares the gateway's answer with the floor's and the previous build's).
      env: {
        SANDBOX_PORT: '0',
        SANDBOX_HOST: '127.0.0.1',
        SANDBOX_LATENCY_MS: String(firstLatency),
        SANDBOX_TODAY: new Date().toISOString().slice(0, 10),
        // The scale pass's many keys (sandbox-tenant-1…), user 1's.
        ...(options.scale ? { SANDBOX_TENANT_KEYS: String(options.scale.keys) } : {}),
      },
      ready: /listening on (http:\/\/[^\s]+)/,
    });
    children.push(sandbox);
    // The gateway as users run it: NODE_ENV=production and its request log on at info (LOG_LEVEL's default),
    // one line per request on its stdout, which the harness reads and drops (--gateway-env
    // '{"LOG_LEVEL":"silent"}' to measure without it).
    const gatewayEnv: Record<string, string> = {
      HOST: '127.0.0.1',
      PORT: '0',
      UPSTREAM_URL: sandbox.url,
      NODE_ENV: 'production',
      // These passes measure the gateway's own work and its upstream calls, request by request: the read
      // cache would answer every repeat (--gateway-env '{"CACHE":"on"}' to measure with it).
      CACHE: 'off',
      // No load balancer watches its /ready: stopped at the end of a pass, it closes at once instead of
      // serving on for DRAIN_DELAY_MS (5 s each, which the passes that start several gateways waited out).
      DRAIN_DELAY_MS: '0',
      ...options.gatewayEnv,
    };
    // A gateway process from `script` on the same sandbox, with the harness's gateway's environment and node flags.
    const startGatewayFrom = async (
      script: string,
      extraEnv: Record<string, string>,
      extraNodeArgs: readonly string[] = [],
      node?: string,
    ): Promise<ChildServer> => {
      const env = { ...gatewayEnv, ...extraEnv };
      const child = await spawnServer({
        script,
        env,
        ready: /Gateway on (http:\/\/[^\s,]+\/graphql)/,
        nodeArgs: [...options.gatewayNodeArgs, ...extraNodeArgs],
        ...(node ? { node } : {}),
        // The request log is at info: a line per request unless LOG_LEVEL is above it.
        linePerRequest: ['info', 'debug', 'trace'].includes(loadConfig({ ...process.env, ...env }).logLevel),
      });
      children.push(child);
      return child;
    };
    // Another gateway process on the same sandbox (the cache passes run some with CACHE=on, or on Redis).
    const startGateway: GatewayStarter = (extraEnv) => startGatewayFrom(options.gatewayScript, extraEnv);
    // The harness's gateway, for the passes that measure it (the scenario passes, the cache pass's cold
    // gateway, the floor pass); the others start gateways of their own.
    const { previousScript } = options;
    const scenarioPasses = options.passes.some((pass) => pass.scenarios.length > 0);
    // The previous build, once, next to it: measured after the gateway in each scenario of the scenario passes.
    // Both start at once; each is stopped at the end, whichever failed.
    if (previousScript && scenarioPasses) log(`starting the previous build's gateway (${previousScript})…`);
    const [gatewayStart, previousStart] = await Promise.allSettled([
      scenarioPasses || options.cachePass || options.floor ? startGateway({}) : null,
      previousScript && scenarioPasses ? startGatewayFrom(previousScript, {}, [], options.previousNode) : undefined,
    ]);
    if (gatewayStart.status === 'rejected') throw gatewayStart.reason;
    if (previousStart.status === 'rejected') throw previousStart.reason;
    const gatewayProcess = gatewayStart.value;
    const gateway: Harness['gateway'] = gatewayProcess ?? { url: '', pid: 0 };
    const previousProcess = previousStart.value;
    const previousGateway: Harness['gateway'] | undefined = previousProcess;

    control = new SandboxControl(sandbox.url, options.quietMs);
    // The same number of sockets as the gateway's pool, read the way the gateway reads it.
    const restConnections = options.restConnections ?? loadConfig({ ...process.env, ...gatewayEnv }).upstream.connections;
    rest = new RestClient(sandbox.url, DEMO_KEY, restConnections);
    const today = await control.today();
    const context: ScenarioContext = { from: addDays(today, -29), to: today, websiteId: '1', uniqueDomain: () => domain('w') };

    const needsList = options.passes.some((pass) => pass.scenarios.includes('websites-list'));
    if (needsList) await ensureWebsites(rest, LIST_SIZE, () => domain('list'), log);

    const passes: PassResult[] = [];
    for (const pass of options.passes) {
      await control.setLatency(pass.latencyMs);
      log(`pass "${pass.name}": ${pass.latencyMs} ms sandbox, ${pass.connections} connections`);
      const results: ScenarioResult[] = [];
      for (const name of pass.scenarios) {
        const scenario = SCENARIOS[name];
        const { result, gatewayCalls } = await runScenario(scenario, pass, options, {
          control,
          rest,
          gateway,
          sandboxPid: sandbox.pid,
          context,
        });
        if (scenario.createsIds) await deleteWebsites(rest, `${marker}w`);
        if (previousGateway) {
          const previousHarness: Harness = { control, rest, gateway: previousGateway, sandboxPid: sandbox.pid, context };
          result.previous = await runPreviousScenario(scenario, pass, options, previousHarness, result, gatewayCalls);
          if (scenario.createsIds) await deleteWebsites(rest, `${marker}w`);
        }
        results.push(result);
      }
      passes.push({
        ...pass,
        results,
        gatewayPeakRssMb: memoryMb(gateway.pid, 'VmHWM'),
        ...(previousGateway ? { previousPeakRssMb: memoryMb(previousGateway.pid, 'VmHWM') } : {}),
      });
    }

    // The read cache's passes, each only when selected.
    const harness: Harness = { control, rest, gateway, sandboxPid: sandbox.pid, context };
    const gatewayToday = dayIn(loadConfig({ ...process.env, ...gatewayEnv }).upstreamTimeZone, Date.now());
    const caching: Pick<BenchReport, 'cache' | 'session' | 'shared'> = {};
    if (options.cachePass) {
      caching.cache = await runCachePass(options.cachePass, options, harness, startGateway, { today, gatewayToday });
    }
    if (options.session) {
      caching.session = await runSessionPass(options.session, { control, startGateway, key: DEMO_KEY, context, today, gatewayToday, log });
    }
    if (options.shared) {
      caching.shared = await runSharedPass(options.shared, { control, startGateway, key: DEMO_KEY, context, today, gatewayToday, log });
    }
    // The live pass: a gateway of its own (LIVE_* settings, --inspect for its memory), on the same sandbox.
    const live = options.live
      ? {
          live: await runLivePass(options.live, {
            control,
            rest,
            startGateway: (extraEnv, extraNodeArgs) => startGatewayFrom(options.gatewayScript, extraEnv, extraNodeArgs),
            key: DEMO_KEY,
            context,
            today,
            durationSeconds: options.durationSeconds,
            warmupSeconds: options.warmupSeconds,
            repeat: options.repeat,
            log,
          }),
        }
      : {};
    // The floor last: it sets the sandbox's latency to its own.
    // A yardstick on the same sandbox with the gateway's pool size: the floor, or the hand-written aggregator.
    const startYardstick = async (script: string, ready: RegExp, env: Record<string, string> = {}): Promise<ChildServer> => {
      const child = await spawnServer({
        script,
        env: {
          HOST: '127.0.0.1',
          PORT: '0',
          UPSTREAM_URL: sandbox.url,
          UPSTREAM_CONNECTIONS: String(restConnections),
          NODE_ENV: 'production',
          ...env,
        },
        ready,
        nodeArgs: options.gatewayNodeArgs,
      });
      children.push(child);
      return child;
    };
    const startFloor = (): Promise<ChildServer> => startYardstick(FLOOR_SCRIPT, /Gateway on (http:\/\/[^\s,]+\/graphql)/);
    // The aggregator answers the dashboard of the harness's context, whatever it is sent.
    const startAggregator = (): Promise<ChildServer> =>
      startYardstick(AGGREGATOR_SCRIPT, /Aggregator on (http:\/\/[^\s,]+\/graphql)/, {
        AGGREGATOR_WEBSITE: context.websiteId,
        AGGREGATOR_FROM: context.from,
        AGGREGATOR_TO: context.to,
      });
    // The floor pass's previous build: started exactly like the harness's gateway, from its own script; without
    // its own previousScript, the run's (previousScript), whose gateway the scenario passes started, if they ran,
    // is the one measured (as the harness's gateway is: both with the scenario passes behind them).
    const floorOptions: FloorPassOptions | null | undefined =
      options.floor && !options.floor.previousScript && previousScript ? { ...options.floor, previousScript } : options.floor;
    const startPrevious = (script: string): Promise<ChildServer> =>
      previousProcess && script === previousScript
        ? Promise.resolve({ ...previousProcess, stop: async () => undefined }) // stopped with the others at the end
        : startGatewayFrom(script, {}, [], options.previousNode);
    // Hive Gateway over the OpenAPI document of the dashboard's reads, composed against this sandbox.
    const startHive = async (): Promise<ChildServer> => {
      const child = await startHiveGateway(sandbox.url, options.gatewayNodeArgs);
      children.push(child);
      return child;
    };
    const floor = floorOptions
      ? { floor: await runFloorPass(floorOptions, options, harness, { startFloor, startAggregator, startPrevious, startHive }) }
      : {};
    // The repeated dashboard's stored answer against a static server with its bytes, after the floor.
    const startStatic = async (env: Record<string, string>): Promise<ChildServer> => {
      const child = await spawnServer({
        script: STATIC_SCRIPT,
        env: { HOST: '127.0.0.1', PORT: '0', ...env },
        ready: /Static server on (http:\/\/[^\s,]+\/graphql)/,
        nodeArgs: options.gatewayNodeArgs,
      });
      children.push(child);
      return child;
    };
    const stored = options.stored
      ? {
          // The floor pass's previous build, when it has one, measured in the stored pass too (its own node).
          stored: await runStoredPass(
            floorOptions?.previousScript !== undefined && options.stored.previousScript === undefined
              ? { ...options.stored, previousScript: floorOptions.previousScript }
              : options.stored,
            {
              control,
              context,
              key: DEMO_KEY,
              // LOG_LEVEL's default is info: a request line each, unless --gateway-env raised or silenced it.
              requestLog: ['trace', 'debug', 'info'].includes(gatewayEnv.LOG_LEVEL ?? 'info'),
              startGateway: (extraEnv, script) =>
                script === undefined ? startGateway(extraEnv) : startGatewayFrom(script, extraEnv, [], options.previousNode),
              startStatic,
              durationSeconds: options.durationSeconds,
              warmupSeconds: options.warmupSeconds,
              log,
            },
          ),
        }
      : {};
    // N gateways on one Redis, then on a cluster, with many keys: last, it sets the sandbox's latency to its own.
    const scale = options.scale
      ? {
          scale: await runScalePass(options.scale, {
            control,
            startGateway,
            context,
            today,
            keyOf: tenantKey,
            durationSeconds: options.durationSeconds,
            warmupSeconds: options.warmupSeconds,
            quietMs: options.quietMs,
            log,
          }),
        }
      : {};

    const machine: MachineInfo = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
      os: `${platform()} ${release()}`,
      memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
      loadAverage: [round(load0, 2), round(loadavg()[0] ?? 0, 2)],
    };
    return {
      startedAt: startedAt.toISOString(),
      seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      machine,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      repeat: options.repeat,
      gatewayEnv: options.gatewayEnv,
      gatewayScript: options.gatewayScript,
      ...(previousScript ? { previousScript } : {}),
      ...(options.previousNode ? { previousNode: execFileSync(options.previousNode, ['--version'], { encoding: 'utf8' }).trim() } : {}),
      passes,
      ...caching,
      ...floor,
      ...stored,
      ...live,
      ...scale,
    };
  } finally {
    process.off('exit', onSignal);
    if (rest) await deleteWebsites(rest, marker).catch(() => undefined);
    await rest?.close();
    await control?.close();
    // The gateway first: it exits cleanly on SIGTERM (and writes its --cpu-prof profile then).
    for (const child of children.reverse()) await child.stop();
  }
}

interface Harness {
  control: SandboxControl;
  rest: RestClient;
  /** What the process has written to its stdout so far, where known (ChildServer.outputBytes, requestLines). */
  gateway: Pick<ChildServer, 'url' | 'pid'> & Partial<Pick<ChildServer, 'outputBytes' | 'requestLines'>>;
  sandboxPid: number;
  context: ScenarioContext;
}

/**
 * The dashboard on a settled range (the 30 days ending yesterday: the dashboard scenario's own range
 * reaches today, whose entries live only CACHE_TTL_RECENT_S) through the CACHE=off gateway (cold:
 * every request reads upstream) and, at each connection count, a fresh CACHE=on gateway warmed by
 * one request just before its runs (the website is a recent entry and the key is re-validated after
 * KEY_RECHECK_S: both 60 s by default, so warm runs lasting longer than that show those reads).
 */
async function runCachePass(
  cachePass: CachePassOptions,
  options: BenchOptions,
  cold: Harness,
  startGateway: GatewayStarter,
  days: { today: string; gatewayToday: string },
): Promise<CachePassResult> {
  const { control } = cold;
  const { log } = options;
  const notes: string[] = [];
  const context = settledContext(cold.context, days.today);
  if (context.to >= days.gatewayToday) {
    notes.push(`the range ends ${context.to}, not before the gateway's today ${days.gatewayToday}: its statistics are not settled`);
  }
  if (days.today !== days.gatewayToday) {
    notes.push(
      `the sandbox's today (${days.today}) is not the gateway's (${days.gatewayToday}): a range is settled when it ends before the gateway's`,
    );
  }
  const scenario = SCENARIOS.dashboard;
  const steps = scenario.steps(context);
  await control.setLatency(cachePass.latencyMs);
  log(`pass "cache": ${cachePass.latencyMs} ms sandbox, dashboard ${context.from}..${context.to}, CACHE=off and CACHE=on`);
  /** Upstream calls since the last settle (attempts to be retried aside); settles again. */
  const calls = async (): Promise<number> => {
    const count = await control.reads();
    await control.settle();
    return count;
  };

  await control.settle();
  const coldCheck = await runChainOnce(cold.gateway.url, steps);
  if (coldCheck.problem) notes.push(`check (CACHE=off): ${coldCheck.problem}`);
  const coldCalls = await calls();
  if (coldCalls !== scenario.expectedCalls)
    notes.push(`one CACHE=off request made ${coldCalls} REST calls, expected ${scenario.expectedCalls}`);

  const rows: CacheRow[] = [];
  let warmPeakRssMb: number | null = null;
  for (const connections of cachePass.connections) {
    const pass: PassOptions = { name: 'cache', latencyMs: cachePass.latencyMs, connections, scenarios: ['dashboard'] };
    const measure = async (kind: 'off' | 'on', harness: Harness): Promise<Omit<CacheRow, 'fillCalls' | 'secondCalls' | 'warmSeconds'>> => {
      const runs: RunFigures[] = [];
      for (let round = 1; round <= options.repeat; round++) {
        const tag = options.repeat > 1 ? ` (run ${round}/${options.repeat})` : '';
        log(`  dashboard, CACHE=${kind}, ${connections} connection${connections === 1 ? '' : 's'}${tag}`);
        runs.push(await measureGateway(scenario, steps, pass, options, harness));
      }
      const measurement = summarise('gateway', runs);
      const upstreamCalls = runs.reduce((sum, run) => sum + run.upstreamCalls, 0);
      const reported = runs.reduce((sum, run) => sum + (run.load.reportedCalls ?? 0), 0);
      const where = `CACHE=${kind}, ${connections} conn.`;
      // More at the sandbox: retried attempts (measurement.retriedCalls).
      if (upstreamCalls < reported) {
        notes.push(
          `${where}: the sandbox counted ${upstreamCalls} calls, the gateway's responses report ${reported} (extensions.upstreamCalls)`,
        );
      }
      if (measurement.errors > 0)
        notes.push(`${where}: ${measurement.errors} requests failed (transport error, non-2xx or GraphQL errors)`);
      return { cache: kind, connections, measurement, upstreamCalls };
    };

    rows.push({ ...(await measure('off', cold)), fillCalls: null, secondCalls: null, warmSeconds: null });

    const warmProcess = await startGateway({ CACHE: 'on' });
    try {
      const warm: Harness = { ...cold, gateway: warmProcess };
      // Its first request fills the cache; the next one should read nothing upstream.
      await control.settle();
      const filledAt = performance.now();
      const fill = await runChainOnce(warm.gateway.url, steps);
      if (fill.problem) notes.push(`check (CACHE=on): ${fill.problem}`);
      const fillCalls = await calls();
      const second = await runChainOnce(warm.gateway.url, steps);
      if (second.problem) notes.push(`check (CACHE=on, second request): ${second.problem}`);
      const secondCalls = await calls();
      const row = await measure('on', warm);
      const warmSeconds = Math.round((performance.now() - filledAt) / 100) / 10;
      if (row.upstreamCalls > 0) {
        notes.push(
          `CACHE=on, ${connections} conn.: ${row.upstreamCalls} upstream calls; the warm runs ended ${warmSeconds} s after the fill ` +
            '(the website is kept CACHE_TTL_RECENT_S and the key re-validated after KEY_RECHECK_S, 60 s each by default)',
        );
      }
      rows.push({ ...row, fillCalls, secondCalls, warmSeconds });
      warmPeakRssMb = maxOf([warmPeakRssMb, memoryMb(warmProcess.pid, 'VmHWM')]);
    } finally {
      await warmProcess.stop();
    }
  }
  return {
    latencyMs: cachePass.latencyMs,
    from: context.from,
    to: context.to,
    sandboxToday: days.today,
    gatewayToday: days.gatewayToday,
    rows,
    warmPeakRssMb,
    notes,
  };
}

/** The floor gateway's entry point, relative to the project root (always this build's, whatever --gateway-script says). */
export const FLOOR_SCRIPT = 'dist-bench/bench/floor-gateway.js';

/** The hand-written aggregator's entry point, relative to the project root. */
export const AGGREGATOR_SCRIPT = 'dist-bench/bench/aggregator.js';

/** What the floor pass starts besides the harness's gateway; each is stopped by the harness at the end too. */
interface FloorStarters {
  startFloor(): Promise<ChildServer>;
  startAggregator(): Promise<ChildServer>;
  startPrevious(script: string): Promise<ChildServer>;
  startHive(): Promise<ChildServer>;
}

/**
 * The dashboard through the harness's gateway (CACHE=off) and through a fresh floor gateway on the same
 * sandbox, alternately (gateway, floor, gateway, floor…), `rounds` measured runs each, each after its own
 * warm-up; medians of req/s and CPU per request, and their ratios gateway ÷ floor. With previousScript,
 * a fresh gateway of that build too, in the same alternation (gateway, previous, floor, …); with `hiveGateway`,
 * Hive Gateway over OpenAPI last in each round (its own form of the dashboard: the same seven reads).
 */
async function runFloorPass(
  floorPass: FloorPassOptions,
  options: BenchOptions,
  harness: Harness,
  { startFloor, startAggregator, startPrevious, startHive }: FloorStarters,
): Promise<FloorPassResult> {
  const { control, log } = { control: harness.control, log: options.log };
  const notes: string[] = [];
  const scenario = SCENARIOS.dashboard;
  const steps = scenario.steps(harness.context);
  const pass: PassOptions = { name: 'floor', latencyMs: floorPass.latencyMs, connections: floorPass.connections, scenarios: ['dashboard'] };
  const previousScript = floorPass.previousScript;
  await control.setLatency(floorPass.latencyMs);
  log(
    `pass "floor": ${floorPass.latencyMs} ms sandbox, ${floorPass.connections} connections, the gateway (CACHE=off)` +
      `${previousScript ? `, the previous build (${previousScript}, CACHE=off)` : ''}, the floor (${FLOOR_SCRIPT})` +
      `${floorPass.hiveGateway ? ' and Hive Gateway over OpenAPI' : ''} alternately`,
  );
  // All at once (each is stopped by the harness at the end, whichever failed to start). Hive Gateway that
  // cannot start is a note, and the pass goes on without it.
  const [floorProcess, aggregatorProcess, previousProcess, hiveProcess] = await Promise.all([
    startFloor(),
    startAggregator(),
    previousScript ? startPrevious(previousScript) : Promise.resolve(undefined),
    floorPass.hiveGateway
      ? startHive().catch((error: Error) => {
          notes.push(`Hive Gateway: not measured: ${error.message.split('\n')[0] ?? ''}`);
          return undefined;
        })
      : Promise.resolve(undefined),
  ]);
  try {
    const harnessOf = (child: ChildServer): Harness => ({
      ...harness,
      gateway: child,
    });
    const floorHarness = harnessOf(floorProcess);
    const aggregatorHarness = harnessOf(aggregatorProcess);
    const previousHarness = previousProcess ? harnessOf(previousProcess) : null;
    const hiveHarness = hiveProcess ? harnessOf(hiveProcess) : null;
    const hiveSteps: GraphqlStep[] = [{ body: () => hiveDashboardBody(harness.context), dynamic: false }];

    // One dashboard through each: the same data, and the same number of upstream calls.
    const checkOne = async (url: string, label: string, asked = steps): Promise<{ data: string | null; calls: number }> => {
      await control.settle();
      const answer = await fetchDashboard(url, asked);
      if (answer.problem) notes.push(`check (${label}): ${answer.problem}`);
      const count = await control.reads();
      await control.resetLog();
      if (count !== scenario.expectedCalls)
        notes.push(`one dashboard through the ${label} made ${count} REST calls, expected ${scenario.expectedCalls}`);
      return { data: answer.data, calls: count };
    };
    const gatewayCheck = await checkOne(harness.gateway.url, 'gateway');
    const previousCheck = previousHarness ? await checkOne(previousHarness.gateway.url, 'previous build') : null;
    const floorCheck = await checkOne(floorHarness.gateway.url, 'floor');
    const aggregatorCheck = await checkOne(aggregatorHarness.gateway.url, 'aggregator');
    const aggregatorSameData =
      gatewayCheck.data === null || aggregatorCheck.data === null ? null : gatewayCheck.data === aggregatorCheck.data;
    if (aggregatorSameData === false) notes.push('the aggregator answered other data than the gateway to the same dashboard');
    const hiveCheck = hiveHarness ? await checkOne(hiveHarness.gateway.url, 'Hive Gateway', hiveSteps) : null;
    // Hive Gateway's answer has the OpenAPI document's shape: its website domain and statistics rows against the gateway's.
    const rowsOf = (data: string | null, from: 'gateway' | 'hive'): string | null =>
      data === null ? null : dashboardRows(JSON.parse(data), from);
    const hiveRows = hiveCheck ? rowsOf(hiveCheck.data, 'hive') : null;
    const gatewayRows = rowsOf(gatewayCheck.data, 'gateway');
    const hiveSameData = hiveRows === null || gatewayRows === null ? null : hiveRows === gatewayRows;
    if (hiveCheck && hiveCheck.data !== null && hiveRows === null) notes.push('Hive Gateway answered the dashboard in another shape');
    if (hiveSameData === false) notes.push("Hive Gateway answered other statistics than the gateway's to the same dashboard");
    const sameData = gatewayCheck.data === null || floorCheck.data === null ? null : gatewayCheck.data === floorCheck.data;
    if (sameData === false) notes.push('the floor answered other data than the gateway to the same dashboard');
    // The previous build against both (a data difference between those two is noted above).
    const previousSameData =
      previousCheck === null || previousCheck.data === null || gatewayCheck.data === null || floorCheck.data === null
        ? null
        : previousCheck.data === gatewayCheck.data && previousCheck.data === floorCheck.data;
    if (previousCheck && previousCheck.data !== null) {
      for (const [label, other] of [
        ['gateway', gatewayCheck],
        ['floor', floorCheck],
      ] as const) {
        if (other.data !== null && other.data !== previousCheck.data)
          notes.push(`the previous build answered other data than the ${label} to the same dashboard`);
      }
    }

    type Kind = 'gateway' | 'previous' | 'floor' | 'aggregator' | 'hive';
    const label: Record<Kind, string> = {
      gateway: 'gateway',
      previous: 'previous build',
      floor: 'floor',
      aggregator: 'aggregator',
      hive: 'Hive Gateway',
    };
    const targets: [Kind, Harness, GraphqlStep[]][] = [
      ['gateway', harness, steps],
      ...(previousHarness ? [['previous', previousHarness, steps] as [Kind, Harness, GraphqlStep[]]] : []),
      ['floor', floorHarness, steps],
      ['aggregator', aggregatorHarness, steps],
      ...(hiveHarness ? [['hive', hiveHarness, hiveSteps] as [Kind, Harness, GraphqlStep[]]] : []),
    ];
    const runs: Record<Kind, RunFigures[]> = { gateway: [], previous: [], floor: [], aggregator: [], hive: [] };
    for (let round = 1; round <= floorPass.rounds; round++) {
      for (const [kind, target, asked] of targets) {
        log(`  dashboard through the ${label[kind]} (run ${round}/${floorPass.rounds})`);
        runs[kind].push(await measureGateway(scenario, asked, pass, options, target));
      }
    }
    const gateway = summarise('gateway', runs.gateway);
    const floor = summarise('gateway', runs.floor);
    const aggregator = summarise('gateway', runs.aggregator);
    const previous = previousHarness ? summarise('gateway', runs.previous) : null;
    const hive = hiveHarness ? summarise('gateway', runs.hive) : null;
    for (const [kind, measurement] of [
      ['gateway', gateway],
      ['previous build', previous],
      ['floor', floor],
      ['aggregator', aggregator],
      ['Hive Gateway', hive],
    ] as const) {
      if (measurement && measurement.errors > 0)
        notes.push(`${measurement.errors} requests through the ${kind} failed (transport error, non-2xx or GraphQL errors)`);
    }
    const each = (list: readonly RunFigures[]): FloorRun[] =>
      list.map((run) => ({
        requestsPerSecond: run.load.completed / run.load.seconds,
        cpuMsPerRequest: run.cpuMs === null || run.load.completed === 0 ? null : run.cpuMs / run.load.completed,
      }));
    const previousResult: { previous: FloorPreviousResult } | Record<string, never> =
      previous && previousCheck && previousProcess
        ? {
            previous: {
              measurement: previous,
              runs: each(runs.previous),
              requestsPerSecondRatio: ratioOf(previous.requestsPerSecond, floor.requestsPerSecond),
              cpuRatio: ratioOf(previous.cpuMsPerRequest, floor.cpuMsPerRequest),
              gatewayRequestsPerSecondRatio: ratioOf(gateway.requestsPerSecond, previous.requestsPerSecond),
              gatewayCpuRatio: ratioOf(gateway.cpuMsPerRequest, previous.cpuMsPerRequest),
              sameData: previousSameData,
              checkCalls: previousCheck.calls,
              peakRssMb: memoryMb(previousProcess.pid, 'VmHWM'),
            },
          }
        : {};
    const hiveResult: { hive: FloorHiveResult } | Record<string, never> =
      hive && hiveCheck && hiveProcess
        ? {
            hive: {
              measurement: hive,
              runs: each(runs.hive),
              hiveCpuRatio: ratioOf(hive.cpuMsPerRequest, gateway.cpuMsPerRequest),
              gatewayRequestsPerSecondRatio: ratioOf(gateway.requestsPerSecond, hive.requestsPerSecond),
              floorCpuRatio: ratioOf(hive.cpuMsPerRequest, floor.cpuMsPerRequest),
              floorRequestsPerSecondRatio: ratioOf(hive.requestsPerSecond, floor.requestsPerSecond),
              sameData: hiveSameData,
              checkCalls: hiveCheck.calls,
              peakRssMb: memoryMb(hiveProcess.pid, 'VmHWM'),
            },
          }
        : {};
    return {
      ...floorPass,
      gateway,
      floor,
      runs: { gateway: each(runs.gateway), floor: each(runs.floor) },
      requestsPerSecondRatio: ratioOf(gateway.requestsPerSecond, floor.requestsPerSecond),
      cpuRatio: ratioOf(gateway.cpuMsPerRequest, floor.cpuMsPerRequest),
      sameData,
      checkCalls: { gateway: gatewayCheck.calls, floor: floorCheck.calls },
      floorPeakRssMb: memoryMb(floorProcess.pid, 'VmHWM'),
      aggregator: {
        measurement: aggregator,
        runs: each(runs.aggregator),
        gatewayCpuRatio: ratioOf(gateway.cpuMsPerRequest, aggregator.cpuMsPerRequest),
        gatewayRequestsPerSecondRatio: ratioOf(gateway.requestsPerSecond, aggregator.requestsPerSecond),
        sameData: aggregatorSameData,
        checkCalls: aggregatorCheck.calls,
        peakRssMb: memoryMb(aggregatorProcess.pid, 'VmHWM'),
      },
      ...previousResult,
      ...hiveResult,
      notes,
    };
  } finally {
    await hiveProcess?.stop();
    await previousProcess?.stop();
    await aggregatorProcess.stop();
    await floorProcess.stop();
  }
}

/** One request of a single-step scenario; its `data` as JSON text, or the problem. */
async function fetchDashboard(url: string, steps: readonly GraphqlStep[]): Promise<{ data: string | null; problem: string | null }> {
  const body = steps[0]?.body({}) ?? null;
  if (body === null || steps.length !== 1) return { data: null, problem: 'not a one-request scenario' };
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEY}` },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) return { data: null, problem: `HTTP ${response.status}: ${text.slice(0, 300)}` };
  try {
    const parsed = JSON.parse(text) as { data?: unknown; errors?: unknown[] };
    if (parsed.errors) return { data: null, problem: `GraphQL errors: ${JSON.stringify(parsed.errors).slice(0, 300)}` };
    return { data: JSON.stringify(parsed.data ?? null), problem: null };
  } catch {
    return { data: null, problem: `not JSON: ${text.slice(0, 300)}` };
  }
}

/** The scenario's checks and measured runs; with the REST calls of the gateway's check chain (signatures). */
async function runScenario(
  scenario: Scenario,
  pass: PassOptions,
  options: BenchOptions,
  harness: Harness,
): Promise<{ result: ScenarioResult; gatewayCalls: string[] }> {
  const { control, rest, gateway, context } = harness;
  const notes: string[] = [];
  const steps = scenario.steps(context);

  // One request of each, to check answers and compare the REST calls the gateway makes with the baselines'.
  let sameCalls: boolean | null = null;
  await control.settle();
  const gatewayCheck = await runChainOnce(gateway.url, steps);
  if (gatewayCheck.problem) notes.push(`check: ${gatewayCheck.problem}`);
  const gatewayCalls = signatures(await control.answered(), scenario.createsIds);
  // The waves of the request made again, its key known to the gateway and its statistics to the sandbox
  // (the first reads the website before the rest, and the sandbox makes its statistics at their first
  // read). At 0 ms every call ends before the next arrives: waves are told apart only by the latency.
  let waves: number | null = null;
  if (pass.latencyMs > 0 && steps.length === 1) {
    await control.resetLog();
    await runChainOnce(gateway.url, steps);
    waves = countWaves((await control.answered()).map(timedCall));
  }
  if (options.baselines) {
    await control.resetLog();
    try {
      await scenario.rest(rest, 'sequential', context, () => undefined);
    } catch (error) {
      notes.push(`check: the REST baseline failed: ${(error as Error).message}`);
    }
    const restCalls = signatures(await control.answered(), scenario.createsIds);
    sameCalls = gatewayCalls.join('\n') === restCalls.join('\n');
    if (!sameCalls) {
      notes.push(
        `the gateway's REST calls differ from the baselines': gateway ${JSON.stringify(gatewayCalls)}, REST ${JSON.stringify(restCalls)}`,
      );
    }
  }
  if (gatewayCalls.length !== scenario.expectedCalls * steps.length) {
    notes.push(
      `one ${steps.length > 1 ? 'chain' : 'request'} made ${gatewayCalls.length} REST calls, expected ${scenario.expectedCalls * steps.length}`,
    );
  }

  const runs: Record<ClientKind, RunFigures[]> = { gateway: [], sequential: [], parallel: [] };
  for (let round = 1; round <= options.repeat; round++) {
    const tag = options.repeat > 1 ? ` (run ${round}/${options.repeat})` : '';
    options.log(`  ${scenario.number}. ${scenario.name}: gateway${tag}`);
    runs.gateway.push(await measureGateway(scenario, steps, pass, options, harness));
    if (!options.baselines) continue;
    for (const mode of ['sequential', 'parallel'] as const) {
      options.log(`  ${scenario.number}. ${scenario.name}: ${mode} REST${tag}`);
      runs[mode].push(await measureRest(scenario, mode, pass, options, harness));
    }
  }
  const gatewayResult = summarise('gateway', runs.gateway);
  // More calls at the sandbox than the answers report are retried attempts (gatewayResult.retriedCalls, shown
  // with the targets): a read tried again under load is still one read. Fewer would be calls the answers
  // claim and the sandbox never saw.
  const counted = runs.gateway.reduce((sum, run) => sum + run.upstreamCalls, 0);
  const reported = runs.gateway.reduce((sum, run) => sum + (run.load.reportedCalls ?? 0), 0);
  if (counted < reported) {
    notes.push(
      `the sandbox counted ${counted} calls, the gateway's responses report ${reported} (extensions.upstreamCalls): ` +
        `${reported - counted} never reached the sandbox`,
    );
  }
  const errors = gatewayResult.errors;
  if (errors > 0) notes.push(`${errors} gateway requests failed (transport error, non-2xx or GraphQL errors)`);
  for (const mode of ['sequential', 'parallel'] as const) {
    const failed = runs[mode].reduce((sum, run) => sum + run.load.errors, 0);
    if (failed > 0) notes.push(`${failed} ${mode} REST pages failed`);
  }
  const result: ScenarioResult = {
    scenario: scenario.name,
    number: scenario.number,
    title: scenario.title,
    expectedCalls: scenario.expectedCalls,
    gateway: gatewayResult,
    sequential: options.baselines ? summarise('sequential', runs.sequential) : null,
    parallel: options.baselines ? summarise('parallel', runs.parallel) : null,
    sameCalls,
    waves,
    notes,
  };
  return { result, gatewayCalls };
}

/**
 * The scenario through the previous build's gateway (`harness.gateway`), right after this build's (`current`):
 * one chain to check its answer and compare its REST calls with the gateway's, then the same measured runs
 * (options.repeat, measureGateway); its medians and this build ÷ it.
 */
async function runPreviousScenario(
  scenario: Scenario,
  pass: PassOptions,
  options: BenchOptions,
  harness: Harness,
  current: ScenarioResult,
  currentCalls: readonly string[],
): Promise<PreviousScenarioResult> {
  const { control, gateway, context } = harness;
  const notes: string[] = [];
  const steps = scenario.steps(context);

  // One chain, in the sandbox log: the same REST calls as this build's gateway made in its own check.
  await control.settle();
  const check = await runChainOnce(gateway.url, steps);
  if (check.problem) notes.push(`check: ${check.problem}`);
  const previousCalls = signatures(await control.answered(), scenario.createsIds);
  await control.resetLog();
  const sameCalls = previousCalls.join('\n') === currentCalls.join('\n');
  if (!sameCalls) {
    notes.push(
      `its REST calls differ from the gateway's: previous build ${JSON.stringify(previousCalls)}, gateway ${JSON.stringify(currentCalls)}`,
    );
  }

  const runs: RunFigures[] = [];
  for (let round = 1; round <= options.repeat; round++) {
    const tag = options.repeat > 1 ? ` (run ${round}/${options.repeat})` : '';
    options.log(`  ${scenario.number}. ${scenario.name}: previous build${tag}`);
    runs.push(await measureGateway(scenario, steps, pass, options, harness));
  }
  const measurement = summarise('gateway', runs);
  const counted = runs.reduce((sum, run) => sum + run.upstreamCalls, 0);
  const reported = runs.reduce((sum, run) => sum + (run.load.reportedCalls ?? 0), 0);
  // More at the sandbox: retried attempts (measurement.retriedCalls), as for the gateway.
  if (counted < reported) {
    notes.push(`the sandbox counted ${counted} calls, the previous build's responses report ${reported} (extensions.upstreamCalls)`);
  }
  if (measurement.errors > 0)
    notes.push(`${measurement.errors} requests through the previous build failed (transport error, non-2xx or GraphQL errors)`);
  return {
    measurement,
    sameCalls,
    ratios: {
      requestsPerSecond: ratioOf(current.gateway.requestsPerSecond, measurement.requestsPerSecond),
      p50: ratioOf(current.gateway.p50, measurement.p50),
      cpuMsPerRequest: ratioOf(current.gateway.cpuMsPerRequest, measurement.cpuMsPerRequest),
    },
    notes,
  };
}

interface RunFigures {
  load: LoadResult;
  upstreamCalls: number;
  cpuMs: number | null;
  /** Bytes the gateway wrote to its stdout during the run (its request log); null where not counted. */
  outputBytes: number | null;
  peakRssMb: number | null;
  sandboxCpuMs: number | null;
}

/** The fewest requests a measured run sends (its amount is otherwise sized from the warm-up's rate). */
const MIN_MEASURED = 50;

async function measureGateway(
  scenario: Scenario,
  steps: readonly GraphqlStep[],
  pass: PassOptions,
  options: BenchOptions,
  { control, gateway, sandboxPid }: Harness,
): Promise<RunFigures> {
  const base = { url: gateway.url, authorization: `Bearer ${DEMO_KEY}`, connections: pass.connections, steps, ok: scenario.ok };
  const lines0 = gateway.requestLines?.();
  const warmup = await runGatewayLoad({ ...base, seconds: options.warmupSeconds });
  // Sized from the warm-up's rate so the run lasts about durationSeconds and ends with nothing in
  // flight: every request counted by the sandbox then belongs to a completed GraphQL request. At least
  // MIN_MEASURED requests, whose CPU time /proc can tell apart from 0 (10 ms ticks).
  const amount = sizedAmount(warmup, pass.connections, steps.length, options.durationSeconds, MIN_MEASURED);
  await control.settle();
  const cpu0 = cpuTimeMs(gateway.pid);
  const sandbox0 = cpuTimeMs(sandboxPid);
  const output0 = gateway.outputBytes?.() ?? null;
  const rss = sampleRss(gateway.pid);
  const load = await runGatewayLoad({ ...base, amount });
  const peakRssMb = rss.stop();
  const cpuMs = difference(cpu0, cpuTimeMs(gateway.pid));
  const sandboxCpuMs = difference(sandbox0, cpuTimeMs(sandboxPid));
  const { count } = await control.count();
  // The log gathers lines for up to LOG_FLUSH_MS before writing them: a short run's lines could all still
  // be in the gateway. Wait for the line of every request since the warm-up began (a request that got no
  // answer may have none: then LOG_FLUSH_MS × 4 at most).
  const { requestLines } = gateway;
  if (requestLines && lines0 !== undefined)
    await until(() => requestLines() >= lines0 + warmup.completed + load.completed, LOG_FLUSH_MS * 4);
  const outputBytes = difference(output0, gateway.outputBytes?.() ?? null);
  await control.resetLog();
  return { load, upstreamCalls: count, cpuMs, outputBytes, peakRssMb, sandboxCpuMs };
}

async function measureRest(
  scenario: Scenario,
  mode: RestMode,
  pass: PassOptions,
  options: BenchOptions,
  { control, rest, context, sandboxPid }: Harness,
): Promise<RunFigures> {
  const iterate = (record: (ms: number) => void): Promise<void> => scenario.rest(rest, mode, context, record);
  await runRestLoad({ connections: pass.connections, seconds: options.warmupSeconds / 2, iterate });
  await control.settle();
  const sandbox0 = cpuTimeMs(sandboxPid);
  const load = await runRestLoad({ connections: pass.connections, seconds: options.durationSeconds, iterate });
  const sandboxCpuMs = difference(sandbox0, cpuTimeMs(sandboxPid));
  const { count } = await control.count();
  await control.resetLog();
  return { load, upstreamCalls: count, cpuMs: null, outputBytes: null, peakRssMb: null, sandboxCpuMs };
}

/** The runs' answersByCalls added up. */
function sumCounts(runs: readonly RunFigures[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const run of runs)
    for (const [calls, count] of Object.entries(run.load.answersByCalls ?? {})) sum[calls] = (sum[calls] ?? 0) + count;
  return sum;
}

/** a ÷ b; NaN when either is missing or not finite, or b is 0. */
function ratioOf(a: number | null, b: number | null): number {
  return a === null || b === null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? Number.NaN : a / b;
}

function difference(before: number | null, after: number | null): number | null {
  return before === null || after === null ? null : after - before;
}

function summarise(client: ClientKind, runs: readonly RunFigures[]): Measurement {
  const each = runs.map((run) => {
    const { p50, p90, p99 } = percentiles(run.load.latencies);
    const done = run.load.completed;
    return {
      rps: done / run.load.seconds,
      p50,
      p90,
      p99,
      calls: done > 0 ? run.upstreamCalls / done : Number.NaN,
      reported: run.load.reportedCalls === null || done === 0 ? null : run.load.reportedCalls / done,
      cpu: run.cpuMs === null || done === 0 ? null : run.cpuMs / done,
      output: run.outputBytes === null || done === 0 ? null : run.outputBytes / done,
      sandboxCpu: run.sandboxCpuMs === null || run.upstreamCalls === 0 ? null : run.sandboxCpuMs / run.upstreamCalls,
    };
  });
  const med = (pick: (figures: (typeof each)[number]) => number | null): number => median(each.map(pick)) ?? Number.NaN;
  return {
    client,
    requests: runs.reduce((sum, run) => sum + run.load.completed, 0),
    errors: runs.reduce((sum, run) => sum + run.load.errors, 0),
    requestsPerSecond: med((f) => f.rps),
    p50: med((f) => f.p50),
    p90: med((f) => f.p90),
    p99: med((f) => f.p99),
    upstreamCallsPerRequest: med((f) => f.calls),
    reportedCallsPerRequest: client === 'gateway' ? median(each.map((f) => f.reported)) : null,
    retriedCalls:
      client === 'gateway' && runs.every((run) => run.load.reportedCalls !== null)
        ? runs.reduce((sum, run) => sum + run.upstreamCalls - (run.load.reportedCalls ?? 0), 0)
        : null,
    answersByCalls: client === 'gateway' && runs.every((run) => run.load.answersByCalls !== null) ? sumCounts(runs) : null,
    cpuMsPerRequest: client === 'gateway' ? med((f) => f.cpu) : null,
    outputBytesPerRequest: client === 'gateway' ? median(each.map((f) => f.output)) : null,
    peakRssMb: client === 'gateway' ? maxOf(runs.map((run) => run.peakRssMb)) : null,
    sandboxCpuMsPerCall: median(each.map((f) => f.sandboxCpu)),
  };
}

/** One pass through a scenario's chain with plain requests; a problem found, if any. */
async function runChainOnce(url: string, steps: readonly GraphqlStep[]): Promise<{ problem: string | null }> {
  const chain: ChainContext = {};
  for (const step of steps) {
    const body = step.body(chain);
    if (body === null) return { problem: 'the chain stopped: a previous step gave nothing to go on' };
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEY}` },
      body,
    });
    const text = await response.text();
    if (response.status !== 200) return { problem: `HTTP ${response.status}: ${text.slice(0, 300)}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { problem: `not JSON: ${text.slice(0, 300)}` };
    }
    const errors = (parsed as { errors?: unknown[] }).errors;
    if (errors) return { problem: `GraphQL errors: ${JSON.stringify(errors).slice(0, 300)}` };
    step.after?.(parsed, chain);
  }
  return { problem: null };
}

/** A sorted list of the calls in the sandbox log, comparable between clients. */
function signatures(entries: readonly LogEntry[], createsIds: boolean): string[] {
  return entries
    .map((entry) => {
      const path = createsIds ? entry.path.replace(/\/\d+(?=\/|$)/g, '/{id}') : entry.path;
      const query = Object.entries(entry.query)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, value]) => `${name}=${value}`)
        .join('&');
      const form = entry.body ? ` form:${[...new URLSearchParams(entry.body).keys()].sort().join(',')}` : '';
      return `${entry.method} ${path}${query ? `?${query}` : ''}${form}`;
    })
    .sort();
}

/** Makes sure the demo user has at least `count` websites (new ones have no statistics: their stats are empty lists). */
async function ensureWebsites(rest: RestClient, count: number, uniqueDomain: () => string, log: (line: string) => void): Promise<void> {
  const page = (await rest.call({ method: 'GET', path: '/websites', query: { per_page: '10' } })) as { meta?: { total?: number } };
  const missing = count - Number(page.meta?.total ?? 0);
  if (missing <= 0) return;
  log(`creating ${missing} websites for the list scenario (deleted at the end)…`);
  for (let i = 0; i < missing; i++) await rest.call({ method: 'POST', path: '/websites', form: { domain: uniqueDomain() } });
}

/** Deletes the websites whose domain contains `marker` (this run's). */
async function deleteWebsites(rest: RestClient, marker: string): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const page = (await rest.call({
      method: 'GET',
      path: '/websites',
      query: { search: marker, search_by: 'domain', per_page: '100' },
    })) as { data: { id: number }[] };
    if (page.data.length === 0) return;
    await Promise.all(page.data.map((website) => rest.call({ method: 'DELETE', path: `/websites/${website.id}` })));
  }
}

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** A log entry's times, for countWaves (an entry without them is one that never ended). */
function timedCall(entry: LogEntry): { startedAt: number; endedAt: number | null } {
  return { startedAt: entry.startedAt ?? 0, endedAt: entry.endedAt ?? null };
}
