// The read cache on Redis with an install slower than the store's budget, and made-up keys' writes
// (issue 45, findings 2 and 3):
//
//   npm run build:bench && node dist-bench/bench/install-latency.js [--latency-ms 150] [--made-up 1500]
//
// One sandbox (answering each call after --latency-ms), one redis-server and one gateway, in this
// process (CACHE=on, REDIS_URL, CACHE_STORE_TIMEOUT_MS left at its 100 ms). It prints:
//   write    a settled statistic of website 2 read, website 1 updated, the statistic read again by
//            another document (no stored answer): how many of 5 such re-reads went to the install;
//   list     the websites read three times, each a page size not read before (10, 25, 50), with the
//            same settled statistic of each of the 7 websites: the install's calls for each;
//   made-up  --made-up mutations, each with a key of its own the install refuses (401), 20 at a time:
//            Redis's names before and after, by kind, and how many of them never expire.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { startSandbox } from '../src/sandbox/index.js';
import { spawnRedis } from './processes.js';

const { values } = parseArgs({
  options: { 'latency-ms': { type: 'string', default: '150' }, 'made-up': { type: 'string', default: '1500' } },
});
const latencyMs = Number(values['latency-ms']);
const madeUp = Number(values['made-up']);

const redis = await spawnRedis();
const admin = new Redis(redis.url);
const sandbox = await startSandbox({ port: 0, today: '2026-03-15' });
const gateway = await createGateway(
  loadConfig({ PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', CACHE: 'on', REDIS_URL: redis.url }),
);
sandbox.setKnobs({ latencyMs });

/** A GraphQL request with `key`: its errors' codes, and the install's calls it made. */
async function post(
  query: string,
  variables: Record<string, unknown> = {},
  key = 'sandbox-key-1',
): Promise<{ codes: string[]; calls: number }> {
  const before = sandbox.log.count;
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { codes: (body.errors ?? []).map((error) => error.extensions?.code ?? 'unknown'), calls: sandbox.log.count - before };
}

/** Long enough for what a request stores after its answer to be stored. */
const STORED_MS = 300;

try {
  let missed = 0;
  for (let i = 1; i <= 5; i++) {
    const stat = `website(id: "2") { id stats(name: COUNTRY, from: "2026-02-01", to: "2026-03-0${i}") { nodes { value count } } }`;
    await post(`query First${i} { ${stat} }`);
    await sleep(STORED_MS);
    await post('mutation($e: Boolean!) { updateWebsite(id: "1", input: { emailReports: $e }) { userErrors { code } } }', {
      e: i % 2 === 0,
    });
    await sleep(STORED_MS);
    if ((await post(`query Again${i} { ${stat} }`)).calls > 0) missed++;
  }
  console.log(`install latency ${latencyMs} ms`);
  console.log(`write    a settled statistic of another website read again after a write: ${missed} of 5 from the install`);

  const calls: number[] = [];
  for (const perPage of [10, 25, 50]) {
    const list = `query L${perPage} { websites(perPage: ${perPage}) { nodes { id stats(name: BROWSER, from: "2026-02-01", to: "2026-03-01") { nodes { value } } } } }`;
    calls.push((await post(list)).calls);
    await sleep(STORED_MS);
  }
  console.log(`list     the install's calls of three list reads with the same 7 settled statistics: ${calls.join(', ')}`);

  const namesBefore = await admin.dbsize();
  const codes = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < madeUp) {
        const i = next++;
        const { codes: got } = await post(
          'mutation { updateWebsite(id: "1", input: { emailReports: true }) { userErrors { code } } }',
          {},
          `made-up-${i}`,
        );
        const code = got[0] ?? 'ok';
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }),
  );
  await sleep(STORED_MS);
  const kinds = new Map<string, { names: number; neverExpire: number }>();
  for await (const names of admin.scanStream({ count: 1_000 }) as AsyncIterable<string[]>) {
    for (const name of names) {
      const kind = name.split(':')[1] ?? name;
      const counted = kinds.get(kind) ?? { names: 0, neverExpire: 0 };
      counted.names++;
      if ((await admin.pttl(name)) === -1) counted.neverExpire++;
      kinds.set(kind, counted);
    }
  }
  const answered = [...codes].map(([code, count]) => `${count} ${code}`).join(', ');
  const byKind = [...kinds].map(([kind, { names, neverExpire }]) => `${kind} ${names} (${neverExpire} never expire)`).join(', ');
  console.log(`made-up  ${madeUp} mutations (${answered}): Redis's names ${namesBefore} -> ${await admin.dbsize()}; after: ${byKind}`);
} finally {
  await gateway.close();
  await sandbox.close();
  admin.disconnect();
  await redis.stop();
}
