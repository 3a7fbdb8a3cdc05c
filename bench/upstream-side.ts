// The upstream side of an uncached dashboard, layer by layer, against the floor's own REST reads:
//
//   npm run build && npm run build:bench && node dist-bench/bench/upstream-side.js [--rounds 5] [--dashboards 400]
//     [--warmup 100] [--in-flight 1] [--no-sockets] [--no-memory] [--no-settings] [--no-collect] [--layers floor,client,decoded,source,built]
//
// One sandbox as a child process (dist/sandbox/main.js, 0 ms latency), so that this process's CPU time
// (process.cpuUsage(): every thread of it, the garbage collector's included) is the reading side's alone.
// A dashboard is its 7 REST reads as the gateway makes them (bench/scenarios.ts): the website and its six
// statistics, all started together; dashboards follow one another (--in-flight: that many at once). Each
// layer reads `--dashboards` of them after `--warmup`, the layers taking turns, for `--rounds` rounds; a
// layer's figure is the median of its rounds, in µs of CPU per dashboard, and its ratio to the floor's
// (each round's ratio, then their median).
//   floor     an undici Pool, request() and body.json(), the path built with URLSearchParams: what
//             bench/floor-gateway.ts does for each read
//   client    createUpstreamClient(...).send() with the production defaults (src/upstream/client.ts): the
//             breaker, retries, deadline, body handling and JSON parsing; the query objects api.ts builds
//   decoded   the client, plus api.ts and wire.ts: the answers decoded into a website and six pages
//   source    upstream/source.ts's createSource, one per dashboard as one per request (CACHE=off): the
//             loaders, the concurrency limit, the caller's signal, the reads the resolvers make
//   built     the source, plus the schema's stat lists (schema/stat.ts's toStatList) of the six pages
// The same layers again over an upstream in memory (the sandbox's answers kept, given back through
// undici's dispatch handler API with no socket): the layers' own JavaScript, without the kernel's and
// the HTTP parser's share, which moves most with the machine's load. Then the pool's settings, for the floor and the client (the same Pool given to it): connections (1, 16,
// 128), pipelining (4, 10) and keep-alive (undici's 4 s default, or 1 ms with a 5 ms pause between
// dashboards: every dashboard opens its sockets again).
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Dispatcher, Pool } from 'undici';
import { dayIn } from '../src/analytics/calendar.js';
import { NO_CACHE } from '../src/cache/read-cache.js';
import type { StatName, StatsQuery } from '../src/domain.js';
import { toStatList } from '../src/schema/stat.js';
import { fetchStatPage, fetchWebsite, statsParams, type Send } from '../src/upstream/api.js';
import { UPSTREAM_TRANSPORT_DEFAULTS, createUpstreamClient, type UpstreamClient } from '../src/upstream/client.js';
import { createStatNames, type StatNames } from '../src/upstream/dialect.js';
import { createSource, type Upstream } from '../src/upstream/source.js';
import { median } from './percentiles.js';
import { spawnServer, type ChildServer } from './processes.js';

export interface UpstreamSideOptions {
  /** Rounds: each layer measured once a round, the layers taking turns. */
  rounds: number;
  /** Dashboards measured per layer and round. */
  dashboards: number;
  /** Dashboards read before each measurement, not counted. */
  warmup: number;
  /** Dashboards read at once (1: one after another, as the layers' cost alone). */
  inFlight: number;
  /** The layers over sockets (the sandbox). */
  sockets: boolean;
  /** Also the layers over an upstream in memory. */
  memory: boolean;
  /** Also the pool settings' table. */
  settings: boolean;
  /** Only these layers (by name; for a profile of one), the first taken as the base of the ratios; null: all. */
  only: string[] | null;
  /**
   * A full garbage collection before each measurement, so that none pays for the one before (off: for a
   * smoke run in a process with a large heap, where the collections would be most of its CPU).
   */
  collect: boolean;
  log(line: string): void;
}

export const UPSTREAM_SIDE_DEFAULTS: UpstreamSideOptions = {
  rounds: 5,
  dashboards: 400,
  warmup: 100,
  inFlight: 1,
  sockets: true,
  memory: true,
  settings: true,
  only: null,
  collect: true,
  log: (line) => console.error(line),
};

/** One layer's medians over the rounds. */
export interface LayerFigure {
  name: string;
  title: string;
  /** µs of CPU per dashboard (7 reads). */
  cpuUs: number;
  /** ÷ the floor's (of the same table). */
  ratio: number;
  /** Dashboards a second, `inFlight` at a time (wall clock). */
  perSecond: number;
  /** Each round's µs per dashboard. */
  runs: number[];
}

export interface UpstreamSideReport {
  startedAt: string;
  node: string;
  /** The 1-minute load average as the run started, and as it ended. */
  loadAverage: [number, number];
  options: Omit<UpstreamSideOptions, 'log'>;
  /** The layers over sockets (the sandbox); empty without `sockets`. */
  layers: LayerFigure[];
  /** The same layers over an upstream in memory (no sockets): their own JavaScript; empty without `memory`. */
  memory: LayerFigure[];
  /** The pool's settings for the floor and the client; empty without `settings`. */
  settings: LayerFigure[];
}

/** A way of reading one dashboard, and what it holds open. */
interface Layer {
  name: string;
  title: string;
  dashboard(): Promise<void>;
  /** Pause after each dashboard (no CPU: a socket's keep-alive runs out meanwhile). */
  pauseMs?: number;
  close(): Promise<void>;
}

const KEY = 'sandbox-key-1';
const AUTHORIZATION = `Bearer ${KEY}`;
const WEBSITE_ID = '1';

/** The dashboard's six statistics with their arguments (bench/scenarios.ts's DASHBOARD_STATS), as StatsQuery. */
function dashboardQueries(from: string, to: string): StatsQuery[] {
  const stat = (name: StatName, sortBy: 'count' | 'value', sort: 'asc' | 'desc', perPage: number): StatsQuery => ({
    websiteId: WEBSITE_ID,
    name,
    from,
    to,
    sortBy,
    sort,
    perPage,
    page: 1,
  });
  return [
    stat('visitor', 'value', 'asc', 50),
    stat('page', 'count', 'desc', 10),
    stat('country', 'count', 'desc', 10),
    stat('browser', 'count', 'desc', 25),
    stat('referrer', 'count', 'desc', 10),
    stat('operating_system', 'count', 'desc', 10),
  ];
}

/** A statistic's query string as the floor's resolver writes it (URLSearchParams, made per call). */
function floorSearch(query: StatsQuery): string {
  return new URLSearchParams({
    name: query.name,
    from: query.from,
    to: query.to,
    sort_by: query.sortBy,
    sort: query.sort,
    per_page: String(query.perPage),
    page: String(query.page),
  }).toString();
}

/** The floor's read (bench/floor-gateway.ts's `get`): request(), body.json(). */
function floorLayer(
  name: string,
  title: string,
  pool: Dispatcher,
  origin: string,
  queries: readonly StatsQuery[],
  pauseMs?: number,
): Layer {
  const get = async (path: string): Promise<unknown> => {
    const { statusCode, body } = await pool.request({
      origin,
      path: `/api/v1${path}`,
      method: 'GET',
      headers: { accept: 'application/json', authorization: AUTHORIZATION },
    });
    if (statusCode !== 200) {
      await body.dump();
      throw new Error(`upstream answered ${statusCode} to GET ${path}`);
    }
    return body.json();
  };
  return {
    name,
    title,
    ...(pauseMs === undefined ? {} : { pauseMs }),
    async dashboard() {
      const reads: Promise<unknown>[] = [get(`/websites/${encodeURIComponent(WEBSITE_ID)}`)];
      for (const query of queries) {
        reads.push(get(`/stats/${encodeURIComponent(WEBSITE_ID)}?${floorSearch(query)}`));
      }
      await Promise.all(reads);
    },
    close: () => pool.close(),
  };
}

/** What every call of a dashboard carries, as source.ts sends it: the key, the caller's signal, the deadline. */
function callBinding(): { signal: AbortSignal; deadline: number; onRateLimit: () => void } {
  return { signal: new AbortController().signal, deadline: Date.now() + 20_000, onRateLimit: () => undefined };
}

/** The client's calls of a dashboard, the bodies parsed and not decoded. */
function clientLayer(
  name: string,
  title: string,
  client: UpstreamClient,
  queries: readonly StatsQuery[],
  close: () => Promise<void>,
  pauseMs?: number,
): Layer {
  return {
    name,
    title,
    ...(pauseMs === undefined ? {} : { pauseMs }),
    async dashboard() {
      const { signal, deadline, onRateLimit } = callBinding();
      const base = { method: 'GET', authorization: AUTHORIZATION, signal, deadline, onRateLimit } as const;
      const reads = [client.send({ ...base, path: `/websites/${WEBSITE_ID}`, notFoundMessage: `No website with id ${WEBSITE_ID}.` })];
      for (const query of queries) {
        reads.push(
          client.send({
            ...base,
            path: `/stats/${WEBSITE_ID}`,
            query: statsParams(query, query.name),
            notFoundMessage: `No website with id ${WEBSITE_ID}.`,
          }),
        );
      }
      await Promise.all(reads);
    },
    close,
  };
}

/** The client through api.ts: each answer decoded (wire.ts) into a website or a page. */
function decodedLayer(client: UpstreamClient, statNames: StatNames, queries: readonly StatsQuery[]): Layer {
  return {
    name: 'decoded',
    title: 'client + api.ts and wire.ts decoding',
    async dashboard() {
      const binding = callBinding();
      const send: Send = (call) => client.send({ ...call, authorization: AUTHORIZATION, ...binding });
      await Promise.all([fetchWebsite(send, WEBSITE_ID), ...queries.map((query) => fetchStatPage(send, statNames, query))]);
    },
    close: async () => undefined,
  };
}

/** A source per dashboard, as a request has (CACHE=off), reading what the dashboard's resolvers read; `build`: and the stat lists. */
function sourceLayer(upstream: Upstream, queries: readonly StatsQuery[], build: boolean): Layer {
  return {
    name: build ? 'built' : 'source',
    title: build ? 'source + schema/stat.ts stat lists' : 'upstream/source.ts createSource (CACHE=off)',
    async dashboard() {
      const usage = { upstreamCalls: 0, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
      const source = createSource(upstream, {
        credentials: { authorization: AUTHORIZATION },
        signal: new AbortController().signal,
        deadline: Date.now() + 20_000,
        maxConcurrency: 8,
        usage,
      });
      const website = source.website(WEBSITE_ID);
      const pages = queries.map((query) => source.statPage(query));
      await website;
      const read = await Promise.all(pages);
      if (build) read.forEach((page, i) => toStatList(page, queries[i] as StatsQuery));
    },
    close: async () => undefined,
  };
}

/** An answer as the sandbox gave it: its headers and body bytes. */
interface StoredAnswer {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * An upstream in memory: each path answered with what the sandbox answered it, on the event loop's next
 * turn (as a socket's answer comes), through undici's dispatch handler API as a Pool calls it. No
 * sockets, no HTTP parsing: what is left is what the layers' own JavaScript costs.
 */
class MemoryUpstream extends Dispatcher {
  constructor(private readonly answers: ReadonlyMap<string, StoredAnswer>) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const answer = this.answers.get(options.path);
    let aborted = false;
    const controller = {
      abort: () => {
        aborted = true;
      },
      pause: () => undefined,
      resume: () => undefined,
      get paused() {
        return false;
      },
      get aborted() {
        return aborted;
      },
      reason: null,
    };
    handler.onRequestStart?.(controller, {});
    setImmediate(() => {
      if (aborted) return;
      if (answer === undefined) {
        handler.onResponseStart?.(controller, 404, {}, 'Not Found');
        handler.onResponseEnd?.(controller, {});
        return;
      }
      // A fresh headers object and body buffer per answer, as undici makes them.
      handler.onResponseStart?.(controller, 200, { ...answer.headers }, 'OK');
      if (!aborted) handler.onResponseData?.(controller, Buffer.from(answer.body));
      if (!aborted) handler.onResponseEnd?.(controller, {});
    });
    return true;
  }

  override async close(): Promise<void> {}
}

/** What the sandbox answers each path of the dashboard (with the query as the layers write it). */
async function storeAnswers(origin: string, paths: readonly string[]): Promise<Map<string, StoredAnswer>> {
  const pool = new Pool(origin, { connections: 1 });
  try {
    const answers = new Map<string, StoredAnswer>();
    for (const path of paths) {
      const { statusCode, headers, body } = await pool.request({
        path,
        method: 'GET',
        headers: { accept: 'application/json', authorization: AUTHORIZATION },
      });
      const bytes = Buffer.from(await body.arrayBuffer());
      if (statusCode !== 200) throw new Error(`the sandbox answered ${statusCode} to GET ${path}`);
      answers.set(path, { headers, body: bytes });
    }
    return answers;
  } finally {
    await pool.close();
  }
}

/** The Pool the client makes, with `extra` settings over it. */
function clientPool(origin: string, extra: Pool.Options): Pool {
  const { connectTimeoutMs, timeoutMs } = UPSTREAM_TRANSPORT_DEFAULTS;
  return new Pool(origin, {
    connections: UPSTREAM_TRANSPORT_DEFAULTS.connections,
    connect: { timeout: connectTimeoutMs },
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    ...extra,
  });
}

/** The pool settings measured, beside the defaults (128 connections, no pipelining, 30 s keep-alive). */
const SETTINGS: { label: string; pool: Pool.Options; pauseMs?: number }[] = [
  { label: '1 connection', pool: { connections: 1 } },
  { label: '16 connections', pool: { connections: 16 } },
  { label: '128 connections (default)', pool: {} },
  { label: '128 connections, pipelining 4', pool: { pipelining: 4 } },
  { label: '128 connections, pipelining 10', pool: { pipelining: 10 } },
  { label: "keep-alive 4 s (undici's default)", pool: { keepAliveTimeout: 4_000 } },
  { label: 'keep-alive 1 ms, 5 ms between dashboards', pool: { keepAliveTimeout: 1, keepAliveMaxTimeout: 1 }, pauseMs: 5 },
];

/** A full garbage collection (V8's `gc`, exposed for this process as it runs). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * µs of CPU and dashboards a second, over `count` dashboards (after `warmup` more), `inFlight` of them
 * at a time (each worker reading one after another).
 */
async function measure(
  layer: Layer,
  { warmup, count, inFlight, collect }: { warmup: number; count: number; inFlight: number; collect: boolean },
): Promise<{ cpuUs: number; perSecond: number }> {
  const run = async (dashboards: number): Promise<number> => {
    let left = dashboards;
    let paused = 0;
    const worker = async (): Promise<void> => {
      while (left > 0) {
        left--;
        await layer.dashboard();
        if (layer.pauseMs !== undefined) {
          const before = performance.now();
          await sleep(layer.pauseMs);
          paused += performance.now() - before;
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return paused / inFlight;
  };
  await run(warmup);
  // What the layer measured before left for the collector is collected before this one is measured.
  if (collect) collectGarbage();
  const wallStart = performance.now();
  const start = process.cpuUsage();
  const paused = await run(count);
  const used = process.cpuUsage(start);
  const wallMs = performance.now() - wallStart - paused;
  return { cpuUs: (used.user + used.system) / count, perSecond: (count / wallMs) * 1000 };
}

/** The median over rounds of `runs`' figure ÷ `base`'s figure of the same round. */
function pairedRatio(runs: readonly number[], base: readonly number[]): number {
  return median(runs.map((cpu, round) => cpu / (base[round] ?? Number.NaN))) ?? Number.NaN;
}

/** The layers taking turns, round after round; each one's medians, with its ratio to the first's. */
async function alternate(layers: readonly Layer[], options: UpstreamSideOptions, what: string): Promise<LayerFigure[]> {
  const runs = layers.map(() => ({ cpu: [] as number[], perSecond: [] as number[] }));
  // Each layer's code compiled by V8's optimising tiers before any is measured: the first one measured
  // would otherwise pay for it.
  const { inFlight, collect } = options;
  for (const layer of layers) await measure(layer, { warmup: 0, count: options.warmup * 3, inFlight, collect });
  for (let round = 1; round <= options.rounds; round++) {
    options.log(`${what}: round ${round} of ${options.rounds}`);
    // Each round starts with another layer, so that none is always measured after the same one.
    for (let turn = 0; turn < layers.length; turn++) {
      const i = (turn + round - 1) % layers.length;
      const { cpuUs, perSecond } = await measure(layers[i] as Layer, {
        warmup: options.warmup,
        count: options.dashboards,
        inFlight,
        collect,
      });
      runs[i]?.cpu.push(cpuUs);
      runs[i]?.perSecond.push(perSecond);
    }
  }
  const cpuOf = (i: number): number => median(runs[i]?.cpu ?? []) ?? Number.NaN;
  // Each round's ratio to the first layer's figure of the same round (measured moments apart, on the
  // same load), then their median: steadier than a ratio of medians on a busy machine.
  const ratioOf = (i: number): number => pairedRatio(runs[i]?.cpu ?? [], runs[0]?.cpu ?? []);
  return layers.map((layer, i) => ({
    name: layer.name,
    title: layer.title,
    cpuUs: cpuOf(i),
    ratio: ratioOf(i),
    perSecond: median(runs[i]?.perSecond ?? []) ?? Number.NaN,
    runs: runs[i]?.cpu ?? [],
  }));
}

/** Fails unless each layer reads the dashboard whole (a wrong path would measure error answers). */
async function checkReads(upstream: Upstream, queries: readonly StatsQuery[]): Promise<void> {
  const source = createSource(upstream, {
    credentials: { authorization: AUTHORIZATION },
    signal: new AbortController().signal,
    deadline: Date.now() + 20_000,
    maxConcurrency: 8,
    usage: { upstreamCalls: 0, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } },
  });
  const website = await source.website(WEBSITE_ID);
  const pages = await Promise.all(queries.map((query) => source.statPage(query)));
  if (website.id !== WEBSITE_ID || pages.some((page) => page.nodes.length === 0)) {
    throw new Error('the sandbox did not answer the dashboard with its data');
  }
}

export async function runUpstreamSide(partial: Partial<UpstreamSideOptions> = {}): Promise<UpstreamSideReport> {
  const options: UpstreamSideOptions = { ...UPSTREAM_SIDE_DEFAULTS, ...partial };
  const startedAt = new Date();
  const load0 = loadavg()[0] ?? 0;
  const today = startedAt.toISOString().slice(0, 10);
  const from = new Date(startedAt.getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const opened: Layer[] = [];
  let sandbox: ChildServer | undefined;
  const clients: UpstreamClient[] = [];
  try {
    options.log('starting the sandbox (0 ms)…');
    sandbox = await spawnServer({
      script: 'dist/sandbox/main.js',
      env: { SANDBOX_PORT: '0', SANDBOX_HOST: '127.0.0.1', SANDBOX_LATENCY_MS: '0', SANDBOX_TODAY: today },
      ready: /listening on (http:\/\/[^\s]+)/,
    });
    const origin = new URL(sandbox.url).origin;
    const queries = dashboardQueries(from, today);
    const statNames = createStatNames('auto');
    const newClient = (dispatcher?: Dispatcher): UpstreamClient => {
      const client = createUpstreamClient({
        ...UPSTREAM_TRANSPORT_DEFAULTS,
        url: origin,
        ...(dispatcher ? { dispatcher } : {}),
        onAttemptFailed: () => undefined,
      });
      clients.push(client);
      return client;
    };
    /** The five layers over a transport: the floor's dispatcher, and the client's (none: the Pool it makes). */
    const layersOver = async (floorDispatcher: Dispatcher, clientDispatcher?: Dispatcher): Promise<Layer[]> => {
      const client = newClient(clientDispatcher);
      const upstream: Upstream = { client, statNames, cache: NO_CACHE, clock: { now: Date.now, timeZone: 'UTC' } };
      await checkReads(upstream, queries);
      const all = [
        floorLayer('floor', "the floor's REST: request() + body.json()", floorDispatcher, origin, queries),
        clientLayer('client', 'createUpstreamClient().send, bodies parsed', client, queries, async () => undefined),
        decodedLayer(client, statNames, queries),
        sourceLayer(upstream, queries, false),
        sourceLayer(upstream, queries, true),
      ];
      opened.push(...all);
      const chosen = options.only === null ? all : all.filter((layer) => options.only?.includes(layer.name));
      if (chosen.length === 0) throw new Error(`no layer is named ${options.only?.join(', ')}`);
      return chosen;
    };

    const layerFigures = options.sockets
      ? await alternate(
          await layersOver(new Pool(origin, { connections: UPSTREAM_TRANSPORT_DEFAULTS.connections })),
          options,
          'layers over sockets',
        )
      : [];
    let memoryFigures: LayerFigure[] = [];
    if (options.memory) {
      const paths = [`/api/v1/websites/${WEBSITE_ID}`, ...queries.map((query) => `/api/v1/stats/${WEBSITE_ID}?${floorSearch(query)}`)];
      const memory = new MemoryUpstream(await storeAnswers(origin, paths));
      // A dashboard costs far less here: four times as many a round, for as steady a figure.
      const inMemory = { ...options, dashboards: options.dashboards * 4, warmup: options.warmup * 4 };
      memoryFigures = await alternate(await layersOver(memory, memory), inMemory, 'layers in memory');
    }
    if (dayIn('UTC', Date.now()) !== today) options.log('(the day changed during the run: the statistics were read all the same)');

    let settings: LayerFigure[] = [];
    if (options.settings) {
      const variants: Layer[] = [];
      for (const setting of SETTINGS) {
        variants.push(
          floorLayer(
            'floor',
            `floor, ${setting.label}`,
            new Pool(origin, { connections: UPSTREAM_TRANSPORT_DEFAULTS.connections, ...setting.pool }),
            origin,
            queries,
            setting.pauseMs,
          ),
        );
        const pool = clientPool(origin, setting.pool);
        variants.push(clientLayer('client', `client, ${setting.label}`, newClient(pool), queries, () => pool.close(), setting.pauseMs));
      }
      opened.push(...variants);
      settings = await alternate(variants, options, 'pool settings');
    }
    return {
      startedAt: startedAt.toISOString(),
      node: process.version,
      loadAverage: [load0, loadavg()[0] ?? 0],
      options: {
        rounds: options.rounds,
        dashboards: options.dashboards,
        warmup: options.warmup,
        inFlight: options.inFlight,
        sockets: options.sockets,
        memory: options.memory,
        settings: options.settings,
        only: options.only,
        collect: options.collect,
      },
      layers: layerFigures,
      memory: memoryFigures,
      settings,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(opened.map((layer) => layer.close()));
    await sandbox?.stop();
  }
}

const fixed = (value: number, digits: number): string =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';

/** The report as Markdown: the layers' tables (over sockets, in memory), then the settings'. */
export function formatUpstreamSide(report: UpstreamSideReport): string {
  const { rounds, dashboards, warmup, inFlight } = report.options;
  const perSecond = `dashboards/s (${inFlight === 1 ? 'one at a time' : `${inFlight} at a time`})`;
  const row = (f: LayerFigure, title: string, ratio: number): string =>
    `| ${title} | ${fixed(f.cpuUs, 0)} | ${fixed(ratio, 2)} | ${fixed(f.perSecond, 0)} |`;
  const lines = [
    `Node ${report.node}, ${report.startedAt}; load average ${fixed(report.loadAverage[0], 2)} → ${fixed(report.loadAverage[1], 2)}; ` +
      `${rounds} rounds of ${dashboards} dashboards a layer (after ${warmup}); medians, ratios paired by round; 0 ms sandbox.`,
  ];
  for (const [figures, where] of [
    [report.layers, 'over sockets (the sandbox)'],
    [report.memory, `over an upstream in memory (no sockets; ${dashboards * 4} dashboards a round)`],
  ] as const) {
    if (figures.length === 0) continue;
    lines.push('', `| layer, ${where} | µs CPU / dashboard | ÷ floor | ${perSecond} |`, '| --- | ---: | ---: | ---: |');
    for (const f of figures) lines.push(row(f, `${f.name}: ${f.title}`, f.ratio));
  }
  if (report.settings.length > 0) {
    lines.push('', `| pool setting | µs CPU / dashboard | ÷ floor (default pool) | ${perSecond} |`, '| --- | ---: | ---: | ---: |');
    const floorDefault = report.settings.find((f) => f.title === 'floor, 128 connections (default)')?.runs ?? [];
    for (const f of report.settings) lines.push(row(f, f.title, pairedRatio(f.runs, floorDefault)));
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: String(UPSTREAM_SIDE_DEFAULTS.rounds) },
      dashboards: { type: 'string', default: String(UPSTREAM_SIDE_DEFAULTS.dashboards) },
      warmup: { type: 'string', default: String(UPSTREAM_SIDE_DEFAULTS.warmup) },
      'in-flight': { type: 'string', default: String(UPSTREAM_SIDE_DEFAULTS.inFlight) },
      'no-settings': { type: 'boolean', default: false },
      'no-memory': { type: 'boolean', default: false },
      'no-sockets': { type: 'boolean', default: false },
      'no-collect': { type: 'boolean', default: false },
      layers: { type: 'string' },
    },
  });
  const count = (name: 'rounds' | 'dashboards' | 'warmup' | 'in-flight', min: number): number => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}, got "${values[name]}"`);
    return value;
  };
  const report = await runUpstreamSide({
    rounds: count('rounds', 1),
    dashboards: count('dashboards', 1),
    warmup: count('warmup', 0),
    inFlight: count('in-flight', 1),
    settings: !values['no-settings'],
    memory: !values['no-memory'],
    sockets: !values['no-sockets'],
    collect: !values['no-collect'],
    only: values.layers === undefined ? null : values.layers.split(','),
  });
  console.log(formatUpstreamSide(report));
}
