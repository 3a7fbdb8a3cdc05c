// The gateway behind a federation router (issue 33): a query joining invoices with their websites
// through Hive Gateway, against the same websites asked straight to the gateway; p50 and upstream
// calls of each, one request at a time. The sandbox and the gateway (FEDERATION=on) are child
// processes; the router and the billing subgraph (test/federation/router.ts) run in this one.
//
//   npm run build --silent && npm run build:bench --silent && node dist-bench/bench/federation.js
//        [--requests 200] [--latency 20] [--repeat 3]
import { parseArgs } from 'node:util';
import { startSupergraph } from '../test/federation/router.js';
import { DEMO_KEY } from './bench.js';
import { median, percentiles } from './percentiles.js';
import { spawnServer } from './processes.js';
import { SandboxControl } from './rest.js';

const STATS = 'stats(name: PAGE, period: LAST_7_DAYS) { totalCount }';
const IDS = ['1', '2', '8'];

/** What is compared: the same websites, asked by a router on behalf of a joined query, and straight. */
const CASES = [
  {
    name: 'joined: 3 invoices with their websites, through the router',
    via: 'router',
    query: `{ invoices(websiteIds: ${JSON.stringify(IDS)}, count: 3) { id amountCents website { domain ${STATS} } } }`,
  },
  {
    name: 'the same 3 websites straight to the gateway',
    via: 'gateway',
    query: `{ ${IDS.map((id) => `w${id}: website(id: "${id}") { domain ${STATS} }`).join(' ')} }`,
  },
  { name: 'one website, through the router', via: 'router', query: `{ website(id: "1") { domain ${STATS} } }` },
  { name: 'one website, straight to the gateway', via: 'gateway', query: `{ website(id: "1") { domain ${STATS} } }` },
] as const;

async function post(endpoint: string, query: string): Promise<void> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEY}` },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { errors?: unknown };
  if (response.status !== 200 || body.errors) throw new Error(`${endpoint} answered ${response.status}: ${JSON.stringify(body)}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '200' },
      latency: { type: 'string', default: '20' },
      repeat: { type: 'string', default: '3' },
    },
  });
  const requests = Number(values.requests);
  const repeat = Number(values.repeat);
  const sandbox = await spawnServer({
    script: 'dist/sandbox/main.js',
    env: {
      SANDBOX_PORT: '0',
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_LATENCY_MS: values.latency,
      SANDBOX_TODAY: new Date().toISOString().slice(0, 10),
    },
    ready: /listening on (http:\/\/[^\s]+)/,
  });
  const gateway = await spawnServer({
    script: 'dist/main.js',
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      UPSTREAM_URL: sandbox.url,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
      CACHE: 'off',
      FEDERATION: 'on',
    },
    ready: /Gateway on (http:\/\/[^\s,]+\/graphql)/,
  });
  const supergraph = await startSupergraph(gateway.url);
  const control = new SandboxControl(sandbox.url);
  try {
    console.log(
      `| ${requests} sequential requests, ${values.latency} ms sandbox, CACHE=off; medians of ${repeat} runs | p50 ms | p90 ms | upstream calls / request |`,
    );
    console.log('|---|---:|---:|---:|');
    for (const { name, via, query } of CASES) {
      const endpoint = via === 'router' ? supergraph.endpoint : gateway.url;
      for (let i = 0; i < 20; i++) await post(endpoint, query); // warm-up: compiled operations, connections
      const p50s: number[] = [];
      const p90s: number[] = [];
      const calls: number[] = [];
      for (let run = 0; run < repeat; run++) {
        await control.settle();
        const samples: number[] = [];
        for (let i = 0; i < requests; i++) {
          const started = performance.now();
          await post(endpoint, query);
          samples.push(performance.now() - started);
        }
        const { p50, p90 } = percentiles(samples);
        p50s.push(p50);
        p90s.push(p90);
        calls.push((await control.count()).count / requests);
      }
      const shown = (value: number | null) => (value === null ? '–' : value.toFixed(1));
      console.log(`| ${name} | ${shown(median(p50s))} | ${shown(median(p90s))} | ${shown(median(calls))} |`);
    }
  } finally {
    await supergraph.close();
    await gateway.stop();
    await sandbox.stop();
  }
}

await main();
