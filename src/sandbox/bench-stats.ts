// How much CPU a stats request over the full 120-day window costs the sandbox.
//   npm run build && node dist/sandbox/bench-stats.js
// 1. In-process, no network: route + auth + validation + range sums + sort + page + JSON.stringify,
//    i.e. everything the sandbox does for a request except Node's HTTP parsing.
// 2. Over real HTTP on loopback with keep-alive: the whole process's CPU per request, client
//    included, so an upper bound on what the server side costs.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { handleApi } from './api.js';
import type { ApiRequest } from './api.js';
import { formatYmd, parseYmd } from './calendar.js';
import { CONTRACT_STAT_NAMES } from './dialect.js';
import { startSandbox } from './server.js';
import { SandboxStore } from './store.js';

const TODAY = '2026-03-15';
const today = parseYmd(TODAY) as number;
const from = formatYmd(today - 119);
const headers = { authorization: 'Bearer sandbox-key-1' };

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const cpuMicros = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** The i-th request of the mix: every name, both sort fields and directions, small and big pages. */
function statsQuery(i: number): Record<string, string> {
  return {
    name: CONTRACT_STAT_NAMES[i % CONTRACT_STAT_NAMES.length] as string,
    from,
    to: TODAY,
    sort_by: i % 3 === 0 ? 'value' : 'count',
    sort: i % 2 === 0 ? 'desc' : 'asc',
    per_page: i % 4 === 0 ? '100' : '10',
    page: String(1 + (i % 2)),
  };
}
const websiteIds = [1, 2, 4, 5, 7, 8, 10];

function seeding(): void {
  let started = performance.now();
  const store = new SandboxStore(today, 20_240_501);
  const construct = performance.now() - started;
  started = performance.now();
  for (const id of websiteIds) store.statsOf(store.find(1, id) as NonNullable<ReturnType<SandboxStore['find']>>);
  const generate = performance.now() - started;
  console.log(`seeding: store ${construct.toFixed(2)} ms; stats of all 7 user-1 websites, first (cold) generation ${generate.toFixed(1)} ms`);
}

function inProcess(): void {
  const store = new SandboxStore(today, 20_240_501);
  const context = { dialect: 'contract' as const, store, limiter: null, now: Date.now };
  const call = (i: number): string => {
    const req: ApiRequest = {
      method: 'GET',
      path: `/api/v1/stats/${websiteIds[i % websiteIds.length] ?? 1}`,
      query: statsQuery(i),
      headers,
      body: '',
      origin: 'http://127.0.0.1:4010',
    };
    return JSON.stringify(handleApi(context, req).body);
  };
  for (let i = 0; i < 5_000; i++) call(i); // warm-up, and every website's stats generated
  const batch = 2_000;
  const perRequest: number[] = [];
  for (let round = 0; round < 25; round++) {
    const before = cpuMicros();
    for (let i = 0; i < batch; i++) call(round * batch + i);
    perRequest.push((cpuMicros() - before) / batch);
  }
  console.log(
    `in-process: median ${median(perRequest).toFixed(1)} µs CPU per stats request over 120 days ` +
      `(25 batches of ${batch}, min ${Math.min(...perRequest).toFixed(1)}, max ${Math.max(...perRequest).toFixed(1)})`,
  );
}

async function overHttp(): Promise<void> {
  const sandbox = await startSandbox({ today: TODAY });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const { hostname, port } = new URL(sandbox.url);
  const get = (i: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const path = `/api/v1/stats/${websiteIds[i % websiteIds.length] ?? 1}?${new URLSearchParams(statsQuery(i)).toString()}`;
      const req = request({ hostname, port, path, agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  const run = async (count: number, offset: number): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) await get(offset + next++);
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  };
  await run(2_000, 0);
  const perRequest: number[] = [];
  const batch = 1_000;
  for (let round = 0; round < 9; round++) {
    const before = cpuMicros();
    await run(batch, round * batch);
    perRequest.push((cpuMicros() - before) / batch);
  }
  console.log(`over HTTP (client + server in one process, 8 in flight): median ${median(perRequest).toFixed(0)} µs CPU per request`);
  agent.destroy();
  await sandbox.close();
}

seeding();
inProcess();
await overHttp();
