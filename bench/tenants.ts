// One tenant against another (issue 38): how long another tenant's request takes while one key floods
// the gateway, against the same while strangers flood `/health` (the control: no admission at all), and
// what a flood of clients that joined the line and left keeps in the gateway's memory.
//
//   npm run build && npm run build:bench && node dist-bench/bench/tenants.js [--gateway dist/main.js]
//            [--probes 24] [--probe-every-ms 500] [--connections 40] [--within-connections 300]
//            [--phases health,over,within,departed]
//
// Each phase has a gateway process (--gateway, as `npm start` runs it, CACHE=off so each request is one
// upstream call) and an in-process sandbox (20 ms) of its own:
//   health   --connections loops of GET /health, the other tenant's probes beside them;
//   over     KEY_1 over its upstream rate limit (30 calls in 15 s per key: every Retry-After fits in
//            REQUEST_DEADLINE_MS) on --connections loops, KEY_2's probes beside them (24 probes stay
//            within KEY_2's own limit);
//   within   KEY_1 on --within-connections loops, no rate limit, KEY_2's probes beside them;
//   departed 3,000 keyless requests with a 60 KB body join the line and disconnect; the gateway's heap and
//            external memory (the inspector, no forced GC) before, and 2 s, 8 s and 20 s after with no traffic;
//            then after two forced full GCs (what is still referenced).
// A probe is `{ websites { totalCount } }` with KEY_2, one at a time every --probe-every-ms: its latency,
// median and max, per phase. Both keys are accepted (known) before a phase starts.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import { distribution, type Distribution } from './attacks.js';
import { freePort, inspect, spawnServer, type ChildServer } from './processes.js';

const KEY_1 = 'Bearer sandbox-key-1';
const KEY_2 = 'Bearer sandbox-key-2';
const PROBE = JSON.stringify({ query: '{ websites { totalCount } }' });

interface Options {
  gateway: string;
  probes: number;
  probeEveryMs: number;
  connections: number;
  withinConnections: number;
}

interface Stage {
  gateway: ChildServer;
  inspectorPort: number;
  close(): Promise<void>;
}

async function stage(options: Options, rateLimit: { limit: number; windowMs: number } | null): Promise<Stage> {
  const sandbox = await startSandbox({ port: 0, latencyMs: 20 });
  if (rateLimit) sandbox.setKnobs({ rateLimit });
  const inspectorPort = await freePort();
  const gateway = await spawnServer({
    script: options.gateway,
    env: { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', WORKERS: '1', CACHE: 'off' },
    ready: /Gateway on (http:\/\/[^\s,]+)\/graphql/,
    nodeArgs: [`--inspect=127.0.0.1:${inspectorPort}`],
  });
  return {
    gateway,
    inspectorPort,
    async close() {
      await gateway.stop();
      await sandbox.close();
    },
  };
}

/** POSTs the probe's query with `key` and reads the answer: its status and whether it has data. */
async function post(client: Pool, key: string | null, body = PROBE, signal?: AbortSignal): Promise<string> {
  const response = await client.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: key }) },
    body,
    ...(signal ? { signal } : {}),
  });
  const text = await response.body.text();
  return `${response.statusCode} ${text.includes('"errors"') ? (/"code":"([A-Z_]+)"/.exec(text)?.[1] ?? 'error') : 'data'}`;
}

/** `connections` loops sending `send` until stopped; counts answers by label. */
function flood(send: () => Promise<string>, connections: number): { stop(): Promise<Record<string, number>> } {
  const counts = new Map<string, number>();
  let stopping = false;
  const loops = Array.from({ length: connections }, async () => {
    while (!stopping) {
      let label: string;
      try {
        label = await send();
      } catch (error) {
        label = `no answer: ${(error as { code?: string }).code ?? 'error'}`;
        await sleep(10);
      }
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return Object.fromEntries(counts);
    },
  };
}

interface ProbeReport {
  latencyMs: Distribution | null;
  answers: Record<string, number>;
  flood: Record<string, number>;
}

/** KEY_2's probes, one at a time, while `start` floods the gateway. */
async function probeBeside(
  options: Options,
  url: string,
  start: (client: Pool) => { stop(): Promise<Record<string, number>> },
): Promise<ProbeReport> {
  const floodClient = new Pool(url, { connections: Math.max(options.connections, options.withinConnections) });
  const probeClient = new Pool(url, { connections: 1 });
  try {
    for (const key of [KEY_1, KEY_2]) await post(probeClient, key); // both known from now on
    const running = start(floodClient);
    await sleep(1_000); // the flood fills the line
    const latencies: number[] = [];
    const answers = new Map<string, number>();
    for (let i = 0; i < options.probes; i++) {
      const startedAt = performance.now();
      const label = await post(probeClient, KEY_2).catch((error: { code?: string }) => `no answer: ${error.code ?? 'error'}`);
      latencies.push(performance.now() - startedAt);
      answers.set(label, (answers.get(label) ?? 0) + 1);
      await sleep(options.probeEveryMs);
    }
    return { latencyMs: distribution(latencies), answers: Object.fromEntries(answers), flood: await running.stop() };
  } finally {
    await floodClient.close();
    await probeClient.close();
  }
}

interface MemoryReport {
  before: { heapUsedMb: number; externalMb: number };
  after2s: { heapUsedMb: number; externalMb: number };
  after8s: { heapUsedMb: number; externalMb: number };
  after20s: { heapUsedMb: number; externalMb: number };
  /** Then after two forced full GCs: what is still referenced. */
  afterGc: { heapUsedMb: number; externalMb: number };
  answers: Record<string, number>;
}

async function memoryOf(inspectorPort: number): Promise<{ heapUsedMb: number; externalMb: number }> {
  const [usage] = await inspect(inspectorPort, [
    { method: 'Runtime.evaluate', params: { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true } },
  ]);
  const memory = JSON.parse(String((usage as { result?: { value?: unknown } }).result?.value)) as { heapUsed: number; external: number };
  const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;
  return { heapUsedMb: mb(memory.heapUsed), externalMb: mb(memory.external) };
}

/** 3,000 keyless requests with a 60 KB body that join the line, then disconnect; memory 2 s, 8 s and 20 s later. */
async function departed(url: string, inspectorPort: number): Promise<MemoryReport> {
  const before = await memoryOf(inspectorPort);
  const client = new Pool(url, { connections: 3_000 });
  const body = JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(60_000) } });
  const leaving = new AbortController();
  const answers = new Map<string, number>();
  const sent = Array.from({ length: 3_000 }, () =>
    post(client, null, body, leaving.signal)
      .catch(() => 'left')
      .then((label) => void answers.set(label, (answers.get(label) ?? 0) + 1)),
  );
  await sleep(3_000); // all sent, read and in line (or turned away)
  leaving.abort();
  await Promise.all(sent);
  await client.close();
  await sleep(2_000);
  const after2s = await memoryOf(inspectorPort);
  await sleep(6_000);
  const after8s = await memoryOf(inspectorPort);
  await sleep(12_000);
  const after20s = await memoryOf(inspectorPort);
  const gc = { method: 'HeapProfiler.collectGarbage' };
  await inspect(inspectorPort, [gc, gc]);
  return { before, after2s, after8s, after20s, afterGc: await memoryOf(inspectorPort), answers: Object.fromEntries(answers) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gateway: { type: 'string', default: 'dist/main.js' },
      probes: { type: 'string', default: '24' },
      'probe-every-ms': { type: 'string', default: '500' },
      connections: { type: 'string', default: '40' },
      'within-connections': { type: 'string', default: '300' },
      phases: { type: 'string' },
    },
  });
  const options: Options = {
    gateway: values.gateway,
    probes: Number(values.probes),
    probeEveryMs: Number(values['probe-every-ms']),
    connections: Number(values.connections),
    withinConnections: Number(values['within-connections']),
  };
  const report: Record<string, unknown> = { gateway: options.gateway };
  type Flood = (client: Pool) => { stop(): Promise<Record<string, number>> };
  const phases: [string, { limit: number; windowMs: number } | null, Flood][] = [
    [
      'health',
      null,
      (client) =>
        flood(async () => {
          const response = await client.request({ path: '/health', method: 'GET' });
          await response.body.text();
          return String(response.statusCode);
        }, options.connections),
    ],
    ['over', { limit: 30, windowMs: 15_000 }, (client) => flood(() => post(client, KEY_1), options.connections)],
    ['within', null, (client) => flood(() => post(client, KEY_1), options.withinConnections)],
  ];
  const only = values.phases?.split(',');
  for (const [name, rateLimit, start] of phases.filter(([name]) => !only || only.includes(name))) {
    process.stderr.write(`tenants: ${name}\n`);
    const running = await stage(options, rateLimit);
    try {
      report[name] = await probeBeside(options, running.gateway.url, start);
    } finally {
      await running.close();
    }
  }
  if (!only || only.includes('departed')) {
    process.stderr.write('tenants: departed\n');
    const running = await stage(options, null);
    try {
      report.departed = await departed(running.gateway.url, running.inspectorPort);
    } finally {
      await running.close();
    }
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
