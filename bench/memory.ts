// The memory figures the docs give. `documents`: the RSS a fresh gateway process (NODE_ENV=production,
// on a sandbox process) gains from distinct documents sent with no key (the parse and validation
// caches): after two seconds' rest, and after two forced full collections (through the inspector).
// `store`: 3,000 distinct 22 KB answers set into a MemoryCacheStore of CACHE_MAX_BYTES in this process,
// as the upstream client decodes them: its accounted bytes, the heap they take and the RSS added.
// `polls`: ten live topics of a ~250 KB result polled every second: the gateway's RSS and heap after
// its first 40 polls and after 200 more. `compiled`: the heap graphql-jit's compiled operations hold, by
// the fields they select, in this process (what use-compiled-execution.ts's estimate stands on).
//   npm run build && npm run build:bench
//   node --heap-growing-percent=40 dist-bench/bench/memory.js [documents|store|polls|compiled]
// MEMORY_RUNS (3), MEMORY_DOCUMENTS (1500), MEMORY_ANSWERS (3000), MEMORY_CACHE_MAX_BYTES (16 MiB);
// MEMORY_GATEWAY_NODE_ARGS: node flags for the gateway (space-separated).
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { Pool } from 'undici';
import { uniqueDocument } from './attacks.js';
import { MemoryCacheStore } from '../src/cache/memory-store.js';
import { schema } from '../src/schema/index.js';
import { settledMemory } from './live.js';
import { type ChildServer, freePort, memoryMb, spawnServer } from './processes.js';

const CONCURRENCY = 8;

interface Growth {
  what: string;
  requests: number;
  /** Median size of what was sent (documents) or of one upstream answer (cache), in KB. */
  itemKb: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  growthMb: number;
  /** RSS and heap growth after two forced full collections (through the inspector). */
  settledGrowthMb: number;
  heapGrowthMb: number;
}

type Gateway = ChildServer & { inspectorPort: number };

async function withProcesses<T>(env: Record<string, string>, run: (gateway: Gateway) => Promise<T>): Promise<T> {
  const sandbox = await spawnServer({
    script: 'dist/sandbox/main.js',
    env: { SANDBOX_PORT: '0', SANDBOX_HOST: '127.0.0.1', SANDBOX_LATENCY_MS: '0', SANDBOX_TODAY: new Date().toISOString().slice(0, 10) },
    ready: /listening on (http:\/\/[^\s]+)/,
  });
  try {
    const inspectorPort = await freePort();
    const gateway = await spawnServer({
      nodeArgs: [`--inspect=127.0.0.1:${inspectorPort}`, ...(process.env.MEMORY_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean)],
      script: 'dist/main.js',
      env: { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', NODE_ENV: 'production', ...env },
      ready: /Gateway on (http:\/\/[^\s,]+\/graphql)/,
    });
    try {
      return await run({ ...gateway, inspectorPort });
    } finally {
      await gateway.stop();
    }
  } finally {
    await sandbox.stop();
  }
}

/** Sends `count` bodies with no key, CONCURRENCY at a time, each answer read in full. */
async function send(pool: Pool, count: number, body: (n: number) => string): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const response = await pool.request({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body(next++),
      });
      const text = await response.body.text();
      if (response.statusCode >= 500) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

setFlagsFromString('--expose-gc');
const round = (mb: number): number => Math.round(mb * 10) / 10;

/** RSS after two seconds' rest, then RSS and heap after two forced full collections. */
async function memoryAfterRest(gateway: Gateway): Promise<{ rss: number; settledRss: number; heap: number }> {
  await sleep(2_000);
  const rss = memoryMb(gateway.pid, 'VmRSS');
  const notes: string[] = [];
  const settled = await settledMemory(gateway.pid, gateway.inspectorPort, notes);
  if (rss === null || settled.rssMb === null || settled.heapUsedMb === null)
    throw new Error(`no memory figures for ${gateway.pid}: ${notes.join('; ')}`);
  return { rss: round(rss), settledRss: round(settled.rssMb), heap: round(settled.heapUsedMb) };
}

function growth(
  what: string,
  requests: number,
  itemKb: number,
  before: Awaited<ReturnType<typeof memoryAfterRest>>,
  after: typeof before,
): Growth {
  return {
    what,
    requests,
    itemKb,
    rssBeforeMb: before.rss,
    rssAfterMb: after.rss,
    growthMb: round(after.rss - before.rss),
    settledGrowthMb: round(after.settledRss - before.settledRss),
    heapGrowthMb: round(after.heap - before.heap),
  };
}

/** 1,500 distinct documents of about 8 KB, no key: parsed, validated and cached, then refused. */
async function documentsGrowth(count: number): Promise<Growth> {
  return withProcesses({}, async (gateway) => {
    const pool = new Pool(new URL(gateway.url).origin, { connections: CONCURRENCY });
    try {
      const body = (n: number): string => JSON.stringify({ query: uniqueDocument(n) });
      await send(pool, 20, (n) => body(1_000_000 + n));
      const before = await memoryAfterRest(gateway);
      await send(pool, count, body);
      const after = await memoryAfterRest(gateway);
      const itemKb = Math.round(uniqueDocument(count / 2).length / 102.4) / 10;
      return growth('keyless documents', count, itemKb, before, after);
    } finally {
      await pool.close();
    }
  });
}

/** An upstream page of 100 rows of about 22 KB, distinct for each n, as its JSON text. */
function pageText(n: number): string {
  const rows = Array.from({ length: 100 }, (_, i) => ({
    value: `/blog/${n}/${i}/${'a-long-path-segment-'.repeat(9)}`,
    count: 1_000 - i + n,
  }));
  return JSON.stringify({
    data: rows,
    links: { first: `http://127.0.0.1/api/v1/stats/1?page=1&n=${n}` },
    meta: { current_page: 1, per_page: 100 },
  });
}

/**
 * `count` distinct 22 KB answers, each decoded as the upstream client does, set into a MemoryCacheStore of
 * `maxBytes` in this process (run it with the gateway's --heap-growing-percent=40): RSS and heap growth.
 */
async function storeGrowth(count: number, maxBytes: number): Promise<Growth & { accountedMb: number; entries: number }> {
  const gc = runInNewContext('gc') as () => void;
  const store = new MemoryCacheStore(maxBytes);
  gc();
  gc();
  const before = process.memoryUsage();
  for (let n = 0; n < count; n++) {
    await store.set(`key:${n}`, {
      value: JSON.parse(pageText(n)) as unknown,
      freshUntil: Date.now() + 3_600_000,
      staleUntil: Date.now() + 7_200_000,
    });
    if (n % 8 === 0) await sleep(0);
  }
  await sleep(2_000);
  const rested = process.memoryUsage().rss;
  gc();
  gc();
  const after = process.memoryUsage();
  const mb = (bytes: number): number => round(bytes / 1024 / 1024);
  return {
    what: `distinct answers into a MemoryCacheStore of ${maxBytes} bytes`,
    requests: count,
    itemKb: round(pageText(count / 2).length / 1024),
    rssBeforeMb: mb(before.rss),
    rssAfterMb: mb(rested),
    growthMb: mb(rested - before.rss),
    settledGrowthMb: mb(after.rss - before.rss),
    heapGrowthMb: mb(after.heapUsed - before.heapUsed),
    accountedMb: mb(store.size.bytes),
    entries: store.size.entries,
  };
}

const TOPICS = 10;
/** About 250 KB: four aliases of six years of daily points (past days from the read cache after the first poll). */
const bigSubscription = (n: number): string =>
  `subscription Big${n} { website(id: "1") { ${Array.from(
    { length: 4 },
    (_, i) => `a${i}: series(metric: VISITORS, from: "2020-01-01", to: "2026-03-15") { points { date count } }`,
  ).join(' ')} } }`;

/** TOPICS live topics of a ~250 KB result, polled every second: RSS and heap after 40 polls, and after `polls` more. */
async function pollsGrowth(polls: number): Promise<Growth> {
  const metricsPort = await freePort();
  const env = {
    CACHE: 'on',
    LIVE_INTERVAL_S: '1',
    LIVE_CALLS_PER_MIN: '100000',
    LIVE_MAX_STREAMS_PER_KEY: '100',
    MAX_COST: '5000',
    METRICS_PORT: String(metricsPort),
  };
  return withProcesses(env, async (gateway) => {
    // Each poll is a query run by the gateway under the subscription's name: counted in its metrics.
    const pollsSoFar = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const counts = text.matchAll(/^gateway_graphql_request_duration_seconds_count\{[^}]*operation="Big\d+"[^}]*\} (\d+)$/gm);
      return [...counts].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    const until = async (count: number): Promise<void> => {
      while ((await pollsSoFar()) < count) await sleep(250);
    };
    const pool = new Pool(new URL(gateway.url).origin, { connections: TOPICS, bodyTimeout: 0 });
    const streams = await Promise.all(
      Array.from({ length: TOPICS }, async (_, n) => {
        const response = await pool.request({
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer sandbox-key-1' },
          body: JSON.stringify({ query: bigSubscription(n) }),
        });
        if (response.statusCode !== 200) throw new Error(`subscription ${n}: HTTP ${response.statusCode}`);
        response.body.on('data', () => undefined);
        return response.body;
      }),
    );
    try {
      await until(40);
      const before = await memoryAfterRest(gateway);
      const early = await pollsSoFar();
      await until(early + polls);
      const after = await memoryAfterRest(gateway);
      return growth(`live polls of ${TOPICS} topics`, polls, 250, before, after);
    } finally {
      for (const stream of streams) stream.destroy();
      await pool.destroy();
    }
  });
}

/**
 * The heap held by 300 distinct operations of each size compiled as use-compiled-execution.ts compiles
 * them (their documents parsed before the first measure: the plugin counts a document apart), and the
 * line through the sizes: bytes = base + per field × selected fields.
 */
function compiledHeap(copies = 300): { sizes: { fields: number; bytes: number }[]; baseBytes: number; perFieldBytes: number } {
  const gc = runInNewContext('gc') as () => void;
  const heap = (): number => {
    for (let i = 0; i < 4; i++) gc();
    return process.memoryUsage().heapUsed;
  };
  const kept: unknown[] = [];
  const sizes = [1, 5, 20, 60].map((websites) => {
    // Distinct aliases in each copy, so that no two compiled functions share their source.
    const selection = (copy: number): string =>
      Array.from({ length: websites }, (_, w) => `w${copy}_${w}: website(id: "1") { id domain privacy createdAt }`).join(' ');
    const documents = Array.from({ length: copies }, (_, copy) => parse(`query Q { ${selection(copy)} }`));
    const before = heap();
    const compiled = documents.map((document) =>
      compileQuery(schema, document, 'Q', { customJSONSerializer: false, disablingCapturingStackErrors: true }),
    );
    const after = heap();
    if (!compiled.every(isCompiledQuery)) throw new Error('an operation did not compile');
    kept.push(compiled);
    return { fields: websites * 5, bytes: Math.round((after - before) / copies) };
  });
  const n = sizes.length;
  const sum = (value: (size: (typeof sizes)[number]) => number): number => sizes.reduce((total, size) => total + value(size), 0);
  const perField =
    (n * sum((s) => s.fields * s.bytes) - sum((s) => s.fields) * sum((s) => s.bytes)) /
    (n * sum((s) => s.fields ** 2) - sum((s) => s.fields) ** 2);
  return { sizes, baseBytes: Math.round((sum((s) => s.bytes) - perField * sum((s) => s.fields)) / n), perFieldBytes: Math.round(perField) };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  const which = process.argv[2];
  if (which === 'store-once') {
    console.log(
      JSON.stringify(
        await storeGrowth(Number(process.env.MEMORY_ANSWERS ?? 3_000), Number(process.env.MEMORY_CACHE_MAX_BYTES ?? 16 * 1024 * 1024)),
      ),
    );
    return;
  }
  if (which === 'compiled') {
    console.log(JSON.stringify(compiledHeap()));
    return;
  }
  const runs = Number(process.env.MEMORY_RUNS ?? 3);
  const documents = Number(process.env.MEMORY_DOCUMENTS ?? 1_500);
  const passes: [string, () => Promise<Growth>][] = [];
  if (which === 'polls') passes.push(['polls', () => pollsGrowth(200)]);
  if (which === undefined || which === 'documents') passes.push(['documents', () => documentsGrowth(documents)]);
  // Each store run in a fresh process with this one's node flags: a process that ran one already reuses its heap.
  const storeRun = async (): Promise<Growth> =>
    JSON.parse(
      execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'store-once'], { encoding: 'utf8' }),
    ) as Growth;
  if (which === undefined || which === 'store') passes.push(['store', storeRun]);
  for (const [name, pass] of passes) {
    const results: Growth[] = [];
    for (let run = 0; run < runs; run++) {
      results.push(await pass());
      console.log(`${name} run ${run + 1}: ${JSON.stringify(results.at(-1))}`);
    }
    for (const field of ['growthMb', 'settledGrowthMb', 'heapGrowthMb'] as const) {
      const values = results.map((result) => result[field]);
      console.log(`${name}: ${field} median ${median(values)} MB of ${values.join(', ')}`);
    }
  }
}

await main();
