// How the read cache uses Redis, against a real redis-server (test/redis.ts), the sandbox and the gateway
// over real HTTP:
// - The store's budget (CACHE_STORE_TIMEOUT_MS) counts the time a request waits on the store, never the
//   time the install takes: an install slower than the budget (the normal case for a real one) still
//   has its writes' drops land in the store and its nested reads answered from it.
// - What the gateway leaves in Redis is bounded: nothing for a write the install refused (a made-up key
//   costs Redis nothing), nor for a made-up key's write whose client left, mid-call or while Redis was
//   stalled; and every name it writes expires, or is one of a fixed few (Redis walked with SCAN).
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { startSandbox } from '../../src/sandbox/index.js';
import {
  CREATE_WEBSITE,
  DELETE_WEBSITE,
  FIXED_DASHBOARD,
  type GraphQLResponse,
  KEY_1,
  KEY_2,
  TODAY,
  UPDATE_WEBSITE,
  type WebsitePayloadData,
  dataOf,
  errorsOf,
  metricOf,
  postGraphQL,
  restCalls,
  testConfig,
  until,
} from '../fixture.js';
import { describe, startRedis } from '../redis.js';

/** A store budget, and an install's latency longer than it by half as much again. */
const BUDGET_MS = 1_000;
const LATENCY_MS = 1_500;

const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

/** A Redis, a sandbox and a gateway on them (`env` added to its settings). */
async function setUp(env: Record<string, string> = {}) {
  const server = await startRedis();
  opened.push(server);
  const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  opened.push({ close: () => admin.disconnect() });
  const sandbox = await startSandbox({ port: 0, today: TODAY });
  opened.push(sandbox);
  const gateway = await createGateway(testConfig(sandbox.url, { CACHE: 'on', REDIS_URL: server.url, ...env }));
  opened.push(gateway);
  /** A request with `key`. */
  const post = <T>(key: string, query: string, variables?: Record<string, unknown>, extensions?: unknown) =>
    postGraphQL<T>(`${gateway.url}/graphql`, { query, variables, extensions }, { authorization: `Bearer ${key}` });
  /** A request with KEY_1: its data, and the calls the install got for it. */
  const read = async <T>(query: string, variables?: Record<string, unknown>): Promise<{ data: T; calls: string[] }> => {
    sandbox.log.reset();
    const data = dataOf(await post<T>(KEY_1, query, variables));
    return { data, calls: restCalls(sandbox) };
  };
  return { admin, sandbox, gateway, post, read };
}

/** The statistic entries in Redis. */
const statEntries = async (admin: Redis): Promise<number> => (await admin.keys('agw:c:*:s:*')).length;

describe('an install slower than the store budget', () => {
  it('a write drops what it touched, not every entry of the key: a settled statistic of another website is still read from the store', async () => {
    const { admin, sandbox, read } = await setUp({ CACHE_STORE_TIMEOUT_MS: String(BUDGET_MS) });
    sandbox.setKnobs({ latencyMs: LATENCY_MS });
    const stat = 'website(id: "2") { id stats(name: COUNTRY, from: "2026-02-01", to: "2026-03-01") { nodes { value count } } }';
    await read(`query First { ${stat} }`);
    await until('the statistic stored', async () => (await statEntries(admin)) > 0);

    const written = await read<{ updateWebsite: { userErrors: unknown[] } }>(UPDATE_WEBSITE, { id: '1', input: { emailReports: true } });
    expect(written.data.updateWebsite.userErrors).toEqual([]);

    // Another document: no stored answer, the statistic read through the read cache.
    const again = await read(`query Again { ${stat} }`);
    expect(again.calls).toEqual([]);
  });

  it('a list read from the install still reads its nested settled statistics from the store', async () => {
    const { admin, sandbox, read } = await setUp({ CACHE_STORE_TIMEOUT_MS: String(BUDGET_MS) });
    sandbox.setKnobs({ latencyMs: LATENCY_MS });
    const list = (perPage: number) =>
      `query L${perPage} { websites(perPage: ${perPage}) { nodes { id stats(name: BROWSER, from: "2026-02-01", to: "2026-03-01") { nodes { value } } } } }`;
    const first = await read<{ websites: { nodes: unknown[] } }>(list(10));
    const websites = first.data.websites.nodes.length;
    expect(websites).toBeGreaterThan(1);
    expect(first.calls.filter((call) => call.startsWith('GET /api/v1/stats/'))).toHaveLength(websites);
    await until('every statistic stored', async () => (await statEntries(admin)) === websites);

    // Another page size: the list is read from the install again, after the budget's time.
    const second = await read(list(25));
    expect(second.calls.filter((call) => call.startsWith('GET /api/v1/stats/'))).toEqual([]);
    expect(second.calls.filter((call) => call.startsWith('GET /api/v1/websites?'))).toHaveLength(1);
  });
});

/** Names of the gateway's that never expire: each one of its kind, so bounded in number. */
const FIXED_NAMES = new Set(['agw:secret', 'agw:{apq}:index', 'agw:{apq}:sizes', 'agw:{apq}:bytes']);

/** Every name in Redis, by SCAN. */
async function everyName(admin: Redis): Promise<string[]> {
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1_000);
    names.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return names.sort();
}

describe('Redis holds nothing a made-up key sent, and nothing without a bound', () => {
  it('a write the install refused (401) writes nothing to Redis, with an install slower than the store budget too', async () => {
    const { admin, sandbox, post } = await setUp();
    // A valid key's read first: the secret, the key's entry and its stored answer (kept once the answer
    // is sent) are there before.
    dataOf(await post(KEY_1, '{ website(id: "1") { id } }'));
    await until('the entry and the stored answer stored', async () => {
      const [entries, answers] = await Promise.all([admin.keys('agw:c:*'), admin.keys('agw:r:*')]);
      return entries.length > 0 && answers.length > 0;
    });
    const before = await everyName(admin);
    const sizeBefore = await admin.dbsize();

    for (const latencyMs of [0, 150]) {
      sandbox.setKnobs({ latencyMs });
      for (let i = 0; i < 4; i++) {
        const key = `made-up-${latencyMs}-${i}`;
        const writes = [
          post(key, UPDATE_WEBSITE, { id: '1', input: { emailReports: true } }),
          post(key, CREATE_WEBSITE, { input: { domain: `made-up-${i}.example.com` } }),
          post(key, DELETE_WEBSITE, { id: '1' }),
        ];
        for (const response of await Promise.all(writes)) expect(errorsOf(response)[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
    }
    // Anything the gateway writes for a request, it writes by the time the drop retries would have run.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await admin.dbsize()).toBe(sizeBefore);
    expect(await everyName(admin)).toEqual(before);
  });

  it('every name the gateway wrote expires, but for a fixed few; a key’s counters outlive its entries', async () => {
    const { admin, sandbox, post } = await setUp({ APQ_REDIS_TTL_S: '3600' });
    dataOf(await post(KEY_1, FIXED_DASHBOARD));
    dataOf(await post(KEY_1, '{ websites(perPage: 25) { nodes { id } } }'));
    dataOf(await post(KEY_2, '{ website(id: "3") { id } }'));
    const created = dataOf(
      await post<{ createWebsite: WebsitePayloadData }>(KEY_1, CREATE_WEBSITE, { input: { domain: 'ttl.example.com' } }),
    );
    const id = created.createWebsite.website?.id;
    dataOf(await post(KEY_1, UPDATE_WEBSITE, { id, input: { emailReports: true } }));
    dataOf(await post(KEY_1, DELETE_WEBSITE, { id }));
    dataOf(await post(KEY_1, FIXED_DASHBOARD));
    const persisted = 'query Persisted { website(id: "1") { id domain } }';
    const hash = createHash('sha256').update(persisted).digest('hex');
    dataOf(await post(KEY_1, persisted, undefined, { persistedQuery: { version: 1, sha256Hash: hash } }));
    // A key with entries revoked: its generation moves on.
    sandbox.revokeKey(KEY_2);
    await post(KEY_2, '{ websites { nodes { id } } }');
    await until('the revoked key’s generation moved on', async () => (await admin.keys('agw:gen:*')).length > 0);
    await until('the stored answers stored', async () => (await admin.keys('agw:r:*')).length > 0);

    const names = await everyName(admin);
    expect(names.filter((name) => name.startsWith('agw:lists:'))).not.toEqual([]);
    const lasting: string[] = [];
    // When each name expires (epoch ms; -1: never), one moment for all whenever it is asked.
    const expiries = new Map<string, number>();
    for (const name of names) {
      const expiry = Number(await admin.call('PEXPIRETIME', name));
      expiries.set(name, expiry);
      if (expiry < 0 && !FIXED_NAMES.has(name)) lasting.push(name);
    }
    expect(lasting).toEqual([]);
    // Each counter outlives what was stored under it: expired, it starts again from 0, and nothing is left that 0 could reach.
    for (const name of names) {
      const keyId = /^agw:(?:c|a):\{([^}]+)\}/.exec(name)?.[1];
      if (keyId === undefined) continue;
      for (const counter of [`agw:gen:{${keyId}}`, `agw:lists:{${keyId}}`]) {
        const counterExpiry = expiries.get(counter);
        if (counterExpiry !== undefined)
          expect(counterExpiry, `${counter} against ${name}`).toBeGreaterThanOrEqual(expiries.get(name) as number);
      }
    }
  });
});

/** Writes with made-up keys a run sends. */
const WRITES = 12;

/** A write with a made-up key whose client can leave: `leave()` aborts it. */
function madeUpWrite(gateway: Gateway, i: number): { leave(): void; ended: Promise<unknown> } {
  const client = new AbortController();
  const ended = fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer made-up-${i}-${Math.random()}` },
    body: JSON.stringify({ query: DELETE_WEBSITE, variables: { id: '1' } }),
    signal: client.signal,
  }).then(
    (response) => response.text(),
    () => undefined,
  );
  return { leave: () => client.abort(), ended };
}

/** The key ids (hash tags) of every name in Redis, but the names shared by every key. */
async function keyTags(admin: Redis): Promise<Set<string>> {
  const tags = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1_000);
    for (const name of batch) {
      const tag = /\{([^{}]+)\}/.exec(name)?.[1];
      if (tag !== undefined && tag !== 'apq') tags.add(tag);
    }
    cursor = next;
  } while (cursor !== '0');
  return tags;
}

/** Every request the gateway took has ended, and a write of the real key after them has reached Redis. */
async function settled(
  admin: Redis,
  gateway: Gateway,
  post: (key: string, query: string, variables?: Record<string, unknown>) => Promise<GraphQLResponse<unknown>>,
): Promise<void> {
  await until('no request active', async () => (await metricOf(gateway, 'gateway_requests_active')) === 0);
  const counters = async () => (await admin.keys('agw:lists:*')).length;
  const before = await counters();
  dataOf(await post(KEY_1, UPDATE_WEBSITE, { id: '1', input: { emailReports: true } }));
  // The real key's writes counter is there (it may have been before: then it moved on).
  await until('the real key’s write in Redis', async () => (await counters()) >= Math.max(before, 1));
}

/** A gateway with its metrics listener, and a real key's entry in Redis before. */
async function madeUpSetUp(env: Record<string, string> = {}) {
  const set = await setUp({ METRICS_PORT: '0', ...env });
  dataOf(await set.post(KEY_1, '{ website(id: "1") { id } }'));
  await until('the entry stored', async () => (await set.admin.keys('agw:c:*')).length > 0);
  return set;
}

describe('a made-up key leaves nothing in Redis, whatever its client does', () => {
  it('clients that leave while the install answers, with another key’s reads in flight', async () => {
    const { admin, sandbox, gateway, post } = await madeUpSetUp();
    const realTags = await keyTags(admin);
    expect(realTags.size).toBe(1);
    sandbox.setKnobs({ latencyMs: 400 });
    sandbox.log.reset();
    // The real key's reads stay in flight in this gateway while the made-up writes end.
    const reading = post(KEY_1, '{ websites(perPage: 25) { nodes { id } } }');
    const writes = Array.from({ length: WRITES }, (_, i) => madeUpWrite(gateway, i));
    await until('every write’s call at the install', () => {
      const madeUp = sandbox.log.entries.filter((entry) => entry.headers.authorization?.startsWith('Bearer made-up-'));
      return madeUp.length >= WRITES;
    });
    for (const write of writes) write.leave();
    await Promise.all(writes.map((write) => write.ended));
    dataOf(await reading);
    sandbox.setKnobs({ latencyMs: 0 });
    await settled(admin, gateway, post);
    expect(await keyTags(admin)).toEqual(realTags);
  });

  it('clients that leave while Redis is stalled, before their calls are sent', async () => {
    const { admin, gateway, post } = await madeUpSetUp({ CACHE_STORE_TIMEOUT_MS: '1000' });
    const realTags = await keyTags(admin);
    await admin.client('PAUSE', 2_500, 'ALL');
    const writes = Array.from({ length: WRITES }, (_, i) => madeUpWrite(gateway, i));
    await until('every write taken', async () => (await metricOf(gateway, 'gateway_requests_active')) >= WRITES);
    for (const write of writes) write.leave();
    await Promise.all(writes.map((write) => write.ended));
    await admin.ping(); // answered once the pause is over
    await settled(admin, gateway, post);
    expect(await keyTags(admin)).toEqual(realTags);
  });
});
