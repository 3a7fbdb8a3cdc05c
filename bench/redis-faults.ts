// A sick Redis (issue 38, findings 3 and 4): what each Redis fault adds to a request's latency, and how
// many answers from before a write two gateways still give once Redis is back, the write made during it.
//
//   npm run build && npm run build:bench && node dist-bench/bench/redis-faults.js [--gateway dist/main.js]
//            [--kinds cut,paused,slow,full] [--requests 30] [--polls 15] [--poll-over-ms 6000] [--hold-ms 0]
//            [--runs 1]
//
// A run starts a sandbox process (dist/sandbox/main.js, no latency, no rate limit), a redis-server, a
// TCP proxy in front of it, and three gateway processes (--gateway, as `npm start` runs it): A and B with
// CACHE=on and REDIS_URL the proxy (CACHE_STORE_TIMEOUT_MS left at its 100 ms), C with CACHE=off. The
// faults, one after another, each healed before the next:
//   cut     the proxy destroys its connections and refuses new ones;
//   paused  the proxy stops forwarding (both ways; what was held goes on when it ends);
//   slow    the proxy holds each of Redis's answers 300 ms;
//   full    `CONFIG SET maxmemory 1` with `maxmemory-policy noeviction`, on a direct connection.
// Per fault:
//   latency  --requests dashboards (a website and four statistics of settled days) one at a time through
//            A with Redis healthy (answered from the store), then as many with the fault on; and as many
//            through C (CACHE=off: what the install costs, the floor of a request the store cannot help).
//            as many through A with Redis healthy, each a dashboard of one more day (not cached: the
//            store asked and the install read, what a sick store's request does once its budget is out).
//            Median and max of each, and sick minus each;
//   stale    `{ website(id: "1") { id emailReports } }` read through A and B until both answer it from the
//            store, the fault on, `updateWebsite` through A flipping emailReports, --hold-ms more of the
//            fault, the fault healed, then
//            --polls reads through each gateway spread over --poll-over-ms: how many show the old value.
// With --runs N the whole is started N times and the medians across runs are printed at the end.
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'undici';
import { distribution } from './attacks.js';
import { spawnRedis, spawnServer, type ChildServer } from './processes.js';
import { redisProxy } from './redis-proxy.js';

const KINDS = ['cut', 'paused', 'slow', 'full'] as const;
type Kind = (typeof KINDS)[number];
const AUTHORIZATION = 'Bearer sandbox-key-1';
const READ = JSON.stringify({ query: '{ website(id: "1") { id emailReports } }' });
const WRITE = 'mutation($v: Boolean!) { updateWebsite(id: "1", input: { emailReports: $v }) { userErrors { message } } }';

/** The dashboard of the 30 days ending yesterday, or of `30 + longer` days (another request, not cached). */
function dashboard(longer = 0): string {
  const day = (daysAgo: number): string => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  const range = `from: "${day(30 + longer)}", to: "${day(1)}"`;
  const stats = ['PAGE', 'COUNTRY', 'BROWSER', 'REFERRER'].map(
    (name) => `${name.toLowerCase()}: stats(name: ${name}, ${range}) { nodes { value count } }`,
  );
  return JSON.stringify({ query: `query Dashboard { website(id: "1") { id domain privacy ${stats.join(' ')} } }` });
}

interface Answer {
  ms: number;
  status: number;
  text: string;
}

async function post(client: Client, body: string): Promise<Answer> {
  const startedAt = performance.now();
  const response = await client.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
    body,
  });
  const text = await response.body.text();
  return { ms: performance.now() - startedAt, status: response.statusCode, text };
}

const fromStore = (answer: Answer): boolean => /"upstreamCalls":0[,}]/.test(answer.text) && !answer.text.includes('"errors"');
const emailReports = (answer: Answer): boolean | null => {
  const match = /"emailReports":(true|false)/.exec(answer.text);
  return match ? match[1] === 'true' : null;
};

/** Posts `body` through each client until every one answers it from the store (or 15 s pass). */
async function untilStored(clients: readonly Client[], body: string): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const answers = [];
    for (const client of clients) answers.push(await post(client, body));
    if (answers.every(fromStore)) return true;
    await sleep(100);
  }
  return false;
}

async function latencies(client: Client, body: string | (() => string), count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await post(client, typeof body === 'string' ? body : body());
    if (answer.status !== 200 || answer.text.includes('"errors"'))
      throw new Error(`dashboard failed: ${answer.status} ${answer.text.slice(0, 300)}`);
    samples.push(answer.ms);
  }
  return samples;
}

interface KindResult {
  kind: Kind;
  healthy: { p50: number; max: number };
  sick: { p50: number; max: number };
  off: { p50: number; max: number };
  miss: { p50: number; max: number };
  write: string;
  /** Which polls were stale, e.g. `A1 B1` (A's and B's first). */
  staleAt: string;
  staleA: number;
  staleB: number;
  polls: number;
}

interface Options {
  gateway: string;
  kinds: Kind[];
  requests: number;
  polls: number;
  pollOverMs: number;
  holdMs: number;
}

async function run(options: Options): Promise<KindResult[]> {
  const opened: Array<{ close(): Promise<void> }> = [];
  const stopping = (child: ChildServer): { close(): Promise<void> } => ({ close: () => child.stop() });
  try {
    const redis = await spawnRedis();
    opened.push(stopping(redis));
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    opened.push({ close: async () => admin.disconnect() });
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const proxy = await redisProxy(Number(new URL(redis.url).port));
    opened.push(proxy);
    const sandbox = await spawnServer({
      script: 'dist/sandbox/main.js',
      env: { SANDBOX_PORT: '0', SANDBOX_LATENCY_MS: '0', SANDBOX_JITTER_MS: '0', SANDBOX_FAULT_RATE: '0', SANDBOX_RATE_LIMIT: '0' },
      ready: /listening on (http:\/\/\S+)/,
    });
    opened.push(stopping(sandbox));
    const gatewayEnv = { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', WORKERS: '1' };
    const ready = /Gateway on (http:\/\/[^\s,]+)\/graphql/;
    const servers = await Promise.all([
      spawnServer({ script: options.gateway, env: { ...gatewayEnv, CACHE: 'on', REDIS_URL: proxy.url }, ready }),
      spawnServer({ script: options.gateway, env: { ...gatewayEnv, CACHE: 'on', REDIS_URL: proxy.url }, ready }),
      spawnServer({ script: options.gateway, env: { ...gatewayEnv, CACHE: 'off' }, ready }),
    ]);
    for (const server of servers) opened.push(stopping(server));
    const [a, b, off] = servers.map((server) => new Client(server.url, { pipelining: 1 })) as [Client, Client, Client];
    for (const client of [a, b, off]) opened.push({ close: () => client.close() });

    const faults: Record<Kind, { on(): Promise<void>; off(): Promise<void> }> = {
      cut: { on: async () => proxy.cut(), off: async () => proxy.restore() },
      paused: { on: async () => proxy.pause(), off: async () => proxy.restore() },
      slow: {
        on: async () => {
          proxy.delayMs = 300;
        },
        off: async () => {
          proxy.delayMs = 0;
        },
      },
      full: {
        on: async () => {
          await admin.config('SET', 'maxmemory', '1');
          const refused = await admin.set('bench:probe', 'x').then(
            () => false,
            (error: Error) => /OOM/.test(error.message),
          );
          if (!refused) throw new Error('Redis took a write with maxmemory 1');
        },
        off: async () => void (await admin.config('SET', 'maxmemory', '0')),
      },
    };
    const body = dashboard();
    let longer = 0;
    const another = (): string => dashboard(++longer);
    const results: KindResult[] = [];
    for (const kind of options.kinds) {
      const fault = faults[kind];
      // (a) latency: healthy (from the store), sick, and cache off.
      if (!(await untilStored([a], body))) process.stderr.write(`${kind}: the dashboard was not answered from the store\n`);
      await latencies(a, body, 3);
      const healthy = await latencies(a, body, options.requests);
      await latencies(off, body, 3);
      const floor = await latencies(off, body, options.requests);
      const misses = await latencies(a, another, options.requests);
      await fault.on();
      const sick = await latencies(a, body, options.requests);
      await fault.off();

      // (b) stale answers after a write during the fault.
      if (!(await untilStored([a, b], READ))) process.stderr.write(`${kind}: the website was not answered from the store\n`);
      const before = emailReports(await post(b, READ));
      await fault.on();
      const write = await post(a, JSON.stringify({ query: WRITE, variables: { v: !before } }));
      const writeLabel = `${write.status} ${write.text.includes('"errors"') || !write.text.includes('"userErrors":[]') ? 'failed' : 'ok'} ${Math.round(write.ms)} ms`;
      await sleep(options.holdMs);
      await fault.off();
      let staleA = 0;
      let staleB = 0;
      const staleAt: string[] = [];
      const everyMs = options.pollOverMs / options.polls;
      for (let i = 0; i < options.polls; i++) {
        const started = performance.now();
        const [fromA, fromB] = await Promise.all([post(a, READ), post(b, READ)]);
        if (emailReports(fromA) === before) {
          staleA++;
          staleAt.push(`A${i + 1}`);
        }
        if (emailReports(fromB) === before) {
          staleB++;
          staleAt.push(`B${i + 1}`);
        }
        await sleep(Math.max(0, everyMs - (performance.now() - started)));
      }
      const figures = (samples: number[]): { p50: number; max: number } => {
        const d = distribution(samples);
        return { p50: d?.p50 ?? Number.NaN, max: d?.max ?? Number.NaN };
      };
      const result = {
        kind,
        healthy: figures(healthy),
        sick: figures(sick),
        off: figures(floor),
        miss: figures(misses),
        write: writeLabel,
        staleAt: staleAt.join(' '),
        staleA,
        staleB,
        polls: options.polls,
      };
      results.push(result);
      print([result]);
    }
    return results;
  } finally {
    for (const item of opened.reverse()) await item.close().catch(() => undefined);
  }
}

const round = (value: number): string => (Number.isFinite(value) ? String(Math.round(value * 10) / 10) : '-');

function print(results: readonly KindResult[]): void {
  for (const r of results) {
    process.stdout.write(
      `| ${r.kind} | ${round(r.healthy.p50)} / ${round(r.healthy.max)} | ${round(r.sick.p50)} / ${round(r.sick.max)} | ` +
        `${round(r.sick.p50 - r.healthy.p50)} / ${round(r.sick.max - r.healthy.max)} | ${round(r.off.p50)} / ${round(r.off.max)} | ` +
        `${round(r.sick.p50 - r.off.p50)} / ${round(r.sick.max - r.off.max)} | ${round(r.miss.p50)} / ${round(r.miss.max)} | ` +
        `${round(r.sick.p50 - r.miss.p50)} / ${round(r.sick.max - r.miss.max)} | ${r.staleA}+${r.staleB} of ${2 * r.polls} | ${r.write} | ${r.staleAt} |\n`,
    );
  }
}

const HEADER =
  '| fault | healthy p50 / max ms | sick p50 / max | added (sick - healthy) | cache off p50 / max | sick - cache off ' +
  '| healthy, not cached | sick - not cached | stale A+B | write | stale polls |\n' +
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gateway: { type: 'string', default: 'dist/main.js' },
      kinds: { type: 'string', default: KINDS.join(',') },
      requests: { type: 'string', default: '30' },
      polls: { type: 'string', default: '15' },
      'poll-over-ms': { type: 'string', default: '6000' },
      'hold-ms': { type: 'string', default: '0' },
      runs: { type: 'string', default: '1' },
    },
  });
  const kinds = values.kinds.split(',').map((kind) => {
    if (!(KINDS as readonly string[]).includes(kind)) throw new Error(`--kinds: no fault "${kind}" (${KINDS.join(', ')})`);
    return kind as Kind;
  });
  const options: Options = {
    gateway: values.gateway,
    kinds,
    requests: Number(values.requests),
    polls: Number(values.polls),
    pollOverMs: Number(values['poll-over-ms']),
    holdMs: Number(values['hold-ms']),
  };
  const runs: KindResult[][] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    process.stdout.write(
      `\nrun ${i + 1}, ${options.gateway}, load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}\n${HEADER}`,
    );
    runs.push(await run(options));
  }
  if (runs.length < 2) return;
  const median = (numbers: number[]): number => {
    const sorted = [...numbers].sort((x, y) => x - y);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  };
  process.stdout.write(
    `\nmedians of ${runs.length} runs, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}\n${HEADER}`,
  );
  for (const kind of kinds) {
    const of = runs.map((results) => results.find((r) => r.kind === kind) as KindResult);
    const pick = (get: (r: KindResult) => number): number => median(of.map(get));
    print([
      {
        kind,
        healthy: { p50: pick((r) => r.healthy.p50), max: pick((r) => r.healthy.max) },
        sick: { p50: pick((r) => r.sick.p50), max: pick((r) => r.sick.max) },
        off: { p50: pick((r) => r.off.p50), max: pick((r) => r.off.max) },
        miss: { p50: pick((r) => r.miss.p50), max: pick((r) => r.miss.max) },
        write: of.map((r) => r.write.replace(/^200 ok /, '')).join(', '),
        staleAt: '',
        staleA: pick((r) => r.staleA),
        staleB: pick((r) => r.staleB),
        polls: options.polls,
      },
    ]);
  }
}

await main();
