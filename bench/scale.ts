// The `scale` pass (issue 40): N gateway processes sharing their state on one Redis, then on a Redis
// Cluster of three masters and three replicas, and dashboards of many keys (the sandbox's tenant keys,
// SANDBOX_TENANT_KEYS) spread over them as a load balancer would. For each store and each N:
//   first   each key's first dashboard (a settled range), key i through gateway i mod N, `connections`
//           at a time: every read a miss, the entries and the stored answer written;
//   repeat  the same dashboards for the run's duration, each gateway sent connections/N of the clients,
//           each client going through the keys in turn (a key's dashboards land on every gateway): what
//           the store answers.
// Each phase: upstream calls, Redis commands (INFO commandstats of every master, reset before it) and
// bytes (INFO stats: what the gateways sent and were sent, replication apart) per dashboard, p50/p99,
// and the gateways' CPU (/proc) per dashboard. The store is emptied and the gateways started afresh for
// each row.
import { dashboardBody, settledContext } from './caching.js';
import { runGatewayLoad, type LoadResult } from './load.js';
import { percentiles } from './percentiles.js';
import { cpuTimeMs, onNode, spawnRedis, spawnRedisCluster, type ChildServer } from './processes.js';
import type { SandboxControl } from './rest.js';
import type { ScenarioContext } from './scenarios.js';
import { SCENARIOS } from './scenarios.js';

export interface ScalePassOptions {
  /** Sandbox latency (ms). */
  latencyMs: number;
  /** The numbers of gateway processes measured, e.g. [2, 4]. */
  gateways: readonly number[];
  /** Distinct API keys (tenants), spread over the gateways and, by their hash tags, over the masters. */
  keys: number;
  /** Clients in all, shared evenly by the gateways. */
  connections: number;
  redisServer: string;
  redisCli: string;
}

/** Figures of one phase, per dashboard where it says so. */
export interface ScalePhase {
  dashboards: number;
  errors: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** The gateways' CPU (user + system) per dashboard, ms; null without /proc. */
  cpuMs: number | null;
  upstreamCalls: number;
  redisCommands: number;
  /** Bytes the gateways sent to Redis and Redis sent them, per dashboard (replication apart). */
  redisBytesIn: number;
  redisBytesOut: number;
  /** Each command's calls per dashboard (lower-case names, those at 0.01 or more). */
  commands: Record<string, number>;
  /** Each master's share of the commands, in the order of its port (one entry on one Redis). */
  masterShares: number[];
}

export interface ScaleRow {
  store: 'redis' | 'cluster';
  gateways: number;
  first: ScalePhase;
  repeat: ScalePhase;
}

export interface ScalePassResult extends ScalePassOptions {
  from: string;
  to: string;
  redisVersion: string | null;
  rows: ScaleRow[];
  notes: string[];
}

export interface ScaleHarness {
  control: SandboxControl;
  /** A gateway process on the harness's sandbox, with this environment. */
  startGateway(env: Record<string, string>): Promise<ChildServer>;
  context: ScenarioContext;
  today: string;
  /** The sandbox's tenant keys, from 1. */
  keyOf(n: number): string;
  durationSeconds: number;
  warmupSeconds: number;
  /** The quiet spell before a run (BenchOptions.quietMs): here also after one, for its writes to land. */
  quietMs: number;
  log(line: string): void;
}

/** A store of either kind: its URL, its masters' ports, emptied between rows. */
interface Store {
  url: string;
  version: string | null;
  masters(): Promise<number[]>;
  stop(): Promise<void>;
}

/** What the masters counted since their last reset: commands by name, bytes in and out. */
interface RedisCounts {
  commands: Map<string, number>;
  byMaster: number[];
  bytesIn: number;
  bytesOut: number;
}

/** Not the gateways' commands: ours (reading and resetting the counts) and a replica's acknowledgements. */
const OWN_COMMANDS = new Set(['info', 'config', 'flushall', 'role', 'replconf']);

const field = (info: string, name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);

async function resetCounts(ports: readonly number[]): Promise<void> {
  await Promise.all(ports.map((port) => onNode(port, (redis) => redis.config('RESETSTAT'))));
}

async function readCounts(ports: readonly number[]): Promise<RedisCounts> {
  const counts: RedisCounts = { commands: new Map(), byMaster: [], bytesIn: 0, bytesOut: 0 };
  for (const port of ports) {
    const [stats, commandstats] = await onNode(port, async (redis) => [await redis.info('stats'), await redis.info('commandstats')]);
    // Redis 7 counts replication apart (total_net_repl_*) and in the totals: the gateways' traffic is the rest.
    counts.bytesIn += field(stats, 'total_net_input_bytes') - field(stats, 'total_net_repl_input_bytes');
    counts.bytesOut += field(stats, 'total_net_output_bytes') - field(stats, 'total_net_repl_output_bytes');
    let own = 0;
    for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      const name = (match[1] as string).toLowerCase();
      if (OWN_COMMANDS.has(name.split('|')[0] as string)) continue;
      const calls = Number(match[2]);
      counts.commands.set(name, (counts.commands.get(name) ?? 0) + calls);
      own += calls;
    }
    counts.byMaster.push(own);
  }
  return counts;
}

async function storeOf(kind: 'redis' | 'cluster', options: ScalePassOptions): Promise<Store> {
  if (kind === 'redis') {
    const redis = await spawnRedis(options.redisServer);
    return { url: redis.url, version: redis.version, masters: async () => [redis.port], stop: () => redis.stop() };
  }
  const cluster = await spawnRedisCluster(options.redisServer, options.redisCli);
  return { url: cluster.url, version: cluster.version, masters: () => cluster.masters(), stop: () => cluster.stop() };
}

export async function runScalePass(options: ScalePassOptions, harness: ScaleHarness): Promise<ScalePassResult> {
  const { control, log } = harness;
  const context = settledContext(harness.context, harness.today);
  const body = dashboardBody(harness.context, context.from, context.to);
  const ok = SCENARIOS.dashboard.ok;
  const result: ScalePassResult = { ...options, from: context.from, to: context.to, redisVersion: null, rows: [], notes: [] };
  await control.setLatency(options.latencyMs);
  // The cluster forms (redis-cli waits for its nodes to agree: a second or two of little CPU) while the one
  // Redis and its gateways start; it has formed before anything is measured.
  const cluster = storeOf('cluster', options);
  const formed = cluster.then(
    () => undefined,
    () => undefined,
  );
  try {
    for (const kind of ['redis', 'cluster'] as const) {
      let store: Store;
      try {
        store = await (kind === 'redis' ? storeOf('redis', options) : cluster);
      } catch (error) {
        result.notes.push(
          `${kind === 'redis' ? 'one Redis' : 'a Redis Cluster'}: not measured: ${(error as Error).message.split('\n')[0] ?? ''}`,
        );
        continue;
      }
      result.redisVersion ??= store.version;
      try {
        for (const count of options.gateways) {
          log(`pass "scale": ${count} gateways on ${kind === 'redis' ? 'one Redis' : 'a Redis Cluster'}, ${options.keys} keys`);
          const masters = (await store.masters()).sort((a, b) => a - b);
          await Promise.all(masters.map((port) => onNode(port, (redis) => redis.flushall())));
          const env = { CACHE: 'on', REDIS_URL: store.url };
          const gateways = await Promise.all(Array.from({ length: count }, () => harness.startGateway(env)));
          await formed;
          try {
            const first = await measure(masters, gateways, () => firstDashboards(gateways, options, harness, body, ok));
            // The repeat's warm-up: not measured.
            await repeatLoad(gateways, options, harness, body, ok, harness.warmupSeconds);
            const repeat = await measure(masters, gateways, () =>
              repeatLoad(gateways, options, harness, body, ok, harness.durationSeconds),
            );
            result.rows.push({ store: kind, gateways: count, first, repeat });
            for (const [name, phase] of [
              ['first', first],
              ['repeat', repeat],
            ] as const) {
              if (phase.errors > 0) result.notes.push(`${kind}, ${count} gateways, ${name}: ${phase.errors} dashboards failed`);
            }
          } finally {
            await Promise.all(gateways.map((gateway) => gateway.stop()));
          }
        }
      } finally {
        await store.stop();
      }
    }
  } finally {
    // Stopped with its row, or here when the pass ended before it (stopping twice does nothing).
    await cluster.then(
      (store) => store.stop(),
      () => undefined,
    );
  }
  await control.settle();
  return result;

  /** Counts reset, the phase run, its figures read once its writes to the store landed. */
  async function measure(
    masters: readonly number[],
    gateways: readonly ChildServer[],
    run: () => Promise<LoadResult>,
  ): Promise<ScalePhase> {
    await control.settle();
    await resetCounts(masters);
    const cpu0 = gateways.map((gateway) => cpuTimeMs(gateway.pid));
    const load = await run();
    // Entries and stored answers are written in the background, after the answer: a quiet spell lets
    // them land (the upstream calls are all made before the answers).
    await new Promise((resolve) => setTimeout(resolve, harness.quietMs));
    const cpu1 = gateways.map((gateway) => cpuTimeMs(gateway.pid));
    const { count: upstreamCalls } = await control.count();
    const counts = await readCounts(masters);
    const dashboards = load.completed;
    const per = (value: number): number => (dashboards === 0 ? Number.NaN : value / dashboards);
    const cpu =
      cpu0.some((value) => value === null) || cpu1.some((value) => value === null)
        ? null
        : cpu1.reduce((sum: number, value, i) => sum + (value as number) - (cpu0[i] as number), 0);
    const total = counts.byMaster.reduce((sum, value) => sum + value, 0);
    const commands: Record<string, number> = {};
    for (const [name, calls] of [...counts.commands].sort((a, b) => b[1] - a[1])) {
      if (per(calls) >= 0.01) commands[name] = per(calls);
    }
    const { p50, p99 } = percentiles(load.latencies);
    return {
      dashboards,
      errors: load.errors,
      requestsPerSecond: dashboards / load.seconds,
      p50,
      p99,
      cpuMs: cpu === null ? null : per(cpu),
      upstreamCalls: per(upstreamCalls),
      redisCommands: per(total),
      redisBytesIn: per(counts.bytesIn),
      redisBytesOut: per(counts.bytesOut),
      commands,
      masterShares: counts.byMaster.map((calls) => (total === 0 ? 0 : calls / total)),
    };
  }
}

/** Each key's first dashboard, key i through gateway i mod N, `connections` at a time. */
async function firstDashboards(
  gateways: readonly ChildServer[],
  options: ScalePassOptions,
  harness: ScaleHarness,
  body: string,
  ok: (body: string) => boolean,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (let n = next++; n < options.keys; n = next++) {
      const gateway = gateways[n % gateways.length] as ChildServer;
      const at = performance.now();
      try {
        const response = await fetch(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.keyOf(n + 1)}` },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status === 200 && ok(text)) latencies.push(performance.now() - at);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.connections, options.keys) }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { completed: latencies.length + errors, errors, latencies, seconds, lateRate: 0, reportedCalls: null, answersByCalls: null };
}

/** The dashboards again for `seconds`: connections/N clients on each gateway, each key in turn. */
async function repeatLoad(
  gateways: readonly ChildServer[],
  options: ScalePassOptions,
  harness: ScaleHarness,
  body: string,
  ok: (body: string) => boolean,
  seconds: number,
): Promise<LoadResult> {
  const loads = await Promise.all(
    gateways.map((gateway, g) => {
      // Each gateway starts its turn through the keys at its own offset.
      let n = Math.floor((g * options.keys) / gateways.length);
      return runGatewayLoad({
        url: gateway.url,
        authorization: '',
        authorizationOf: () => `Bearer ${harness.keyOf((n++ % options.keys) + 1)}`,
        connections: Math.max(1, Math.round(options.connections / gateways.length)),
        steps: [{ body: () => body, dynamic: false }],
        ok,
        seconds,
      });
    }),
  );
  return {
    completed: loads.reduce((sum, load) => sum + load.completed, 0),
    errors: loads.reduce((sum, load) => sum + load.errors, 0),
    latencies: loads.flatMap((load) => load.latencies),
    seconds: Math.max(...loads.map((load) => load.seconds)),
    lateRate: 0,
    reportedCalls: null,
    answersByCalls: null,
  };
}
