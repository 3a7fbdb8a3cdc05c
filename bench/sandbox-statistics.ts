// What the seeded statistics cost the sandbox: start-up, generating them, keeping them, serving them.
//   npm run build && npm run build:bench && node dist-bench/bench/sandbox-statistics.js
// 1. Start-up: startSandbox() to listening, in-process; and `node dist/sandbox/main.js` from spawn
//    to its first line on stdout (Node's own start included).
// 2. Seeding: the first (cold) generation of every seeded website's statistics, and what they keep
//    in memory afterwards (heap and array buffers, after a full GC, against the store before).
// 3. In-process, no network: route + auth + validation + range sums + sort + page + JSON.stringify,
//    i.e. everything the sandbox does for a request except Node's HTTP parsing; over the 120 and
//    the 400 days ending today.
// 4. Over real HTTP on loopback with keep-alive: the whole process's CPU per request, client
//    included, so an upper bound on what the server side costs.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { handleApi } from '../src/sandbox/api.js';
import type { ApiRequest } from '../src/sandbox/api.js';
import { formatYmd, parseYmd } from '../src/sandbox/calendar.js';
import { CONTRACT_STAT_NAMES } from '../src/sandbox/dialect.js';
import { startSandbox } from '../src/sandbox/server.js';
import { SandboxStore } from '../src/sandbox/store.js';
import type { WebsiteRecord } from '../src/sandbox/store.js';
import { PROJECT_ROOT } from './processes.js';

const TODAY = '2026-03-15';
const SEED = 20_240_501;
const today = parseYmd(TODAY) as number;
const headers = { authorization: 'Bearer sandbox-key-1' };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const cpuMicros = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const spread = (values: number[], digits: number): string =>
  `median ${median(values).toFixed(digits)}, min ${Math.min(...values).toFixed(digits)}, max ${Math.max(...values).toFixed(digits)}`;

/** The i-th request of the mix: every name, both sort fields and directions, small and big pages. */
function statsQuery(i: number, days: number): Record<string, string> {
  return {
    name: CONTRACT_STAT_NAMES[i % CONTRACT_STAT_NAMES.length] as string,
    from: formatYmd(today - (days - 1)),
    to: TODAY,
    sort_by: i % 3 === 0 ? 'value' : 'count',
    sort: i % 2 === 0 ? 'desc' : 'asc',
    per_page: i % 4 === 0 ? '100' : '10',
    page: String(1 + (i % 2)),
  };
}
const websiteIds = [1, 2, 4, 5, 7, 8, 10];
/** Every seeded website, both users'. */
const seededWebsites = (store: SandboxStore): WebsiteRecord[] =>
  Array.from({ length: 10 }, (_, i) => store.findAny(i + 1) as WebsiteRecord);

async function startUp(): Promise<void> {
  const inProcess: number[] = [];
  for (let run = 0; run < 21; run++) {
    const started = performance.now();
    const sandbox = await startSandbox({ today: TODAY });
    inProcess.push(performance.now() - started);
    await sandbox.close();
  }
  const first = inProcess.shift() as number;
  const spawned: number[] = [];
  const main = join(PROJECT_ROOT, 'dist/sandbox/main.js');
  for (let run = 0; run < 9; run++) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [main], {
        env: { ...process.env, SANDBOX_PORT: '0', SANDBOX_TODAY: TODAY },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.once('error', reject);
      child.stdout.once('data', () => {
        spawned.push(performance.now() - started);
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    });
  }
  console.log(
    `start-up in-process: startSandbox() to listening ${spread(inProcess, 2)} ms (20 runs; the process's first ${first.toFixed(1)} ms)`,
  );
  console.log(`start-up as a process: spawn to the first line of dist/sandbox/main.js ${spread(spawned, 0)} ms (9 runs)`);
}

/** One fresh store: its construction, the first generation of every website's stats, and what they keep. */
function seedOnce(seed: number): { construct: number; generate: number; retained: number } {
  gc();
  let started = performance.now();
  const store = new SandboxStore(today, seed);
  const construct = performance.now() - started;
  gc();
  const before = process.memoryUsage();
  started = performance.now();
  for (const website of seededWebsites(store)) store.statsOf(website);
  const generate = performance.now() - started;
  gc();
  const after = process.memoryUsage();
  // Still in use here, so the GC above kept every series.
  if (store.statsOf(store.findAny(1) as WebsiteRecord).size === 0) throw new Error('no stats');
  return { construct, generate, retained: (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / 1_048_576 };
}

function seeding(): void {
  const runs = Array.from({ length: 7 }, (_, run) => seedOnce(SEED + run));
  const construct = runs.map((run) => run.construct);
  const generate = runs.map((run) => run.generate);
  const retained = runs.map((run) => run.retained);
  console.log(`seeding: store ${spread(construct, 2)} ms; first generation of all 10 websites' stats ${spread(generate, 1)} ms (7 seeds)`);
  console.log(`memory kept by all 10 websites' stats (heap + array buffers, after GC): ${spread(retained, 2)} MiB`);
}

function inProcess(days: number): void {
  const store = new SandboxStore(today, SEED);
  const context = { dialect: 'contract' as const, store, limiter: null, now: Date.now };
  const call = (i: number): string => {
    const req: ApiRequest = {
      method: 'GET',
      path: `/api/v1/stats/${websiteIds[i % websiteIds.length] ?? 1}`,
      query: statsQuery(i, days),
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
  console.log(`in-process: ${spread(perRequest, 1)} µs CPU per stats request over ${days} days (25 batches of ${batch})`);
}

async function overHttp(days: number): Promise<void> {
  const sandbox = await startSandbox({ today: TODAY });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const { hostname, port } = new URL(sandbox.url);
  const get = (i: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const path = `/api/v1/stats/${websiteIds[i % websiteIds.length] ?? 1}?${new URLSearchParams(statsQuery(i, days)).toString()}`;
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
  console.log(`over HTTP, ${days} days (client + server in one process, 8 in flight): ${spread(perRequest, 0)} µs CPU per request`);
  agent.destroy();
  await sandbox.close();
}

await startUp();
seeding();
inProcess(120);
inProcess(400);
await overHttp(120);
await overHttp(400);
