// The read cache and the APQ registry in Redis (REDIS_URL), against a real redis-server (test/redis.ts)
// and the sandbox over real HTTP: the store on its own; several gateways sharing entries, invalidation
// and persisted documents with no setting but the URL; Redis killed, restarted empty, paused or
// absent, which may cost a request at most the store timeout, never its answer; and REDIS_URL's
// validation.
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { sha256Hex } from '../../src/graphql/plugins/use-persisted-queries.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { CacheRecord } from '../../src/cache/store.js';
import { RedisCacheStore } from '../../src/cache/redis-store.js';
import { parseRedisUrl } from '../../src/cache/redis-connection.js';
import {
  CREATE_WEBSITE,
  KEY_1,
  TODAY,
  UPDATE_WEBSITE,
  dataOf,
  errorsOf,
  postGraphQL,
  restCalls,
  testConfig,
  until as waitUntil,
  type GraphQLResponse,
  type WebsitePayloadData,
  FIXED_DASHBOARD,
  type FixedDashboardData,
} from '../fixture.js';
// test/redis.ts's describe: the whole file is skipped without redis-server outside CI.
import { freePort } from '../ports.js';
import { describe, redisProxy, startRedis, useRedis, type RedisServer } from '../redis.js';

const redis = useRedis();

/** A client of our own, to look into Redis (TTLs, keys) and to pause it. */
let admin: Redis;
beforeAll(() => {
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});
afterAll(() => admin?.quit()); // never set when Redis did not start: its own error says why
// Each test starts from an empty Redis (no secret, no entries, no documents).
beforeEach(async () => {
  await admin.flushall();
});

// --- helpers --------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds (fixture.ts), failing the test after `withinMs`. */
const until = (what: string, check: () => Promise<boolean>, withinMs = 5_000): Promise<void> => waitUntil(what, check, withinMs);

/** The keys of a Redis matching `pattern` (on a short-lived client: the Redis may not be the file's). */
async function keysOf(url: string, pattern: string): Promise<string[]> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await client.keys(pattern);
  } finally {
    client.disconnect();
  }
}

/** pino lines, parsed, kept for the test to read. */
function capturedLog(): { logger: Logger; lines: Array<{ level: number; msg: string; operation?: string; error?: string }> } {
  const lines: Array<{ level: number; msg: string; operation?: string; error?: string }> = [];
  const logger = pino({ level: 'info', base: null }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}
const STORE_FAILED = 'cache store failed: reading from the upstream';

/** The gateways and stores a test made, closed after it. */
const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

interface Client {
  gateway: Gateway;
  gql<T>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
  /** A request and how long it took to be answered. */
  timed<T>(query: string): Promise<{ response: GraphQLResponse<T>; ms: number }>;
  post<T>(body: unknown): Promise<GraphQLResponse<T>>;
}

async function startGateway(sandbox: Sandbox, env: Record<string, string>, options: GatewayOptions = {}): Promise<Client> {
  const gateway = await createGateway(testConfig(sandbox.url, env), options);
  opened.push(gateway);
  const endpoint = `${gateway.url}/graphql`;
  const post = <T>(body: unknown) => postGraphQL<T>(endpoint, body, { authorization: `Bearer ${KEY_1}` });
  return {
    gateway,
    post,
    gql: <T>(query: string, variables?: Record<string, unknown>) => post<T>({ query, variables }),
    async timed<T>(query: string) {
      const started = performance.now();
      const response = await post<T>({ query });
      return { response, ms: performance.now() - started };
    },
  };
}

async function startUpstream(): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: 0, today: TODAY });
  opened.push(sandbox);
  return sandbox;
}

/** CACHE_STORE_TIMEOUT_MS where a test is about what is shared, not about a slow store. */
const SHARING_BUDGET_MS = '2000';

const DASHBOARD = FIXED_DASHBOARD;
type DashboardData = FixedDashboardData;
const DASHBOARD_READS = 6;

interface CacheExtensions {
  upstreamCalls: number;
  cache: { hits: number; misses: number; stale: number };
}
const usageOf = (response: GraphQLResponse<unknown>): CacheExtensions => response.extensions as unknown as CacheExtensions;

/** Until the background writes of the answers just read are in Redis (the answer does not wait for them). */
const cachedEntries = (url: string, count: number) =>
  until(
    `${count} cache entries in Redis`,
    async () => (await keysOf(url, 'agw:c:*')).length >= count && (await keysOf(url, 'agw:seen:*')).length > 0,
  );

/** The answer the gateway gives with no cache at all: what every cached or store-less answer must equal. */
async function referenceDashboard(sandbox: Sandbox): Promise<{ data: DashboardData; ms: number }> {
  const plain = await startGateway(sandbox, { CACHE: 'off' });
  await plain.gql(DASHBOARD); // warm the connection and the stat names
  const { response, ms } = await plain.timed<DashboardData>(DASHBOARD);
  return { data: dataOf(response), ms };
}

// --- the store on its own -------------------------------------------------------------------------

describe('RedisCacheStore against Redis', () => {
  const storeOn = (url: string, timeoutMs = 1_000, now?: () => number): RedisCacheStore => {
    const store = new RedisCacheStore(url, timeoutMs, now);
    opened.push(store);
    return store;
  };
  const recordFor = (value: unknown, freshMs: number, staleMs: number, at = Date.now()): CacheRecord => ({
    value,
    freshUntil: at + freshMs,
    staleUntil: at + freshMs + staleMs,
  });

  it('gives back what was set, in Redis under agw: with an expiry at its stale lifetime; delete drops it', async () => {
    const store = storeOn(redis.url);
    const record = recordFor({ id: '1', list: [1, 2, 3], nested: { ok: true, none: null } }, 1_000, 9_000);
    await store.set('k', record);
    expect(await store.get('k')).toEqual(record);
    expect(await store.get('unknown')).toBeUndefined();
    const pttl = await admin.pttl('agw:k');
    expect(pttl).toBeGreaterThan(8_000);
    expect(pttl).toBeLessThanOrEqual(10_000);
    await store.delete('k');
    expect(await store.get('k')).toBeUndefined();
    expect(await admin.exists('agw:k')).toBe(0);
    await store.delete('k'); // deleting what is not there is no error
  });

  it("a record's bytes are kept as they are after its JSON, and given back so by get and look, guarded or not", async () => {
    const store = storeOn(redis.url);
    // Line feeds and bytes that are no UTF-8 inside the bytes: only the JSON's end divides the two.
    const bytes = Buffer.from([0x7b, 0x0a, 0xff, 0x00, 0x0a, 0xc3, 0xa9, 0x7d]);
    const record: CacheRecord = { ...recordFor({ headers: ['vary', 'Origin'], n: 1 }, 1_000, 9_000), bytes };
    await store.set('answer', record);
    const held = await admin.getBuffer('agw:answer');
    const { bytes: _bytes, ...json } = record;
    expect(held).toEqual(Buffer.concat([Buffer.from(JSON.stringify(json)), Buffer.from([0x0a]), bytes]));
    expect(await store.get('answer')).toEqual(record);
    expect(Buffer.from((await store.get('answer'))?.bytes ?? [])).toEqual(bytes);
    expect(await store.set('guarded', record, { 'gen:k': 0 })).toBe(true);
    const found = await store.look('guarded', ['gen:k'], []);
    expect(found.record?.value).toEqual(record.value);
    expect(Buffer.from(found.record?.bytes ?? [])).toEqual(bytes);
    // A record without bytes is JSON alone, as ever.
    await store.set('plain', recordFor('v', 1_000, 9_000));
    expect(JSON.parse((await admin.get('agw:plain')) ?? '')).toMatchObject({ value: 'v' });
    expect((await store.get('plain'))?.bytes).toBeUndefined();
  });

  it('Redis drops a record at its stale lifetime (not at its fresh one)', async () => {
    const store = storeOn(redis.url);
    await store.set('short', recordFor('v', 0, 200));
    expect((await store.get('short'))?.value).toBe('v'); // past fresh, still there to answer stale
    await sleep(350);
    expect(await admin.exists('agw:short')).toBe(0);
    expect(await store.get('short')).toBeUndefined();
  });

  it("the expiry follows the store's clock (a pinned clock, even with fractions of a millisecond)", async () => {
    const pinned = Date.parse('2030-01-01T00:00:00Z') + 0.5;
    const store = storeOn(redis.url, 1_000, () => pinned);
    await store.set('pinned', recordFor('v', 30_000, 30_000, pinned - 0.5));
    const pttl = await admin.pttl('agw:pinned');
    expect(pttl).toBeGreaterThan(59_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    // As the memory store: what is past its stale lifetime by the store's clock is not given back.
    await store.set('old', recordFor('v', 0, 10, pinned - 1_000));
    expect(await store.get('old')).toBeUndefined();
  });

  it('counters start at 0, bump atomically, and are the same for every store on the Redis', async () => {
    const [one, two] = [storeOn(redis.url), storeOn(redis.url)];
    expect(await one.counter('gen:a')).toBe(0);
    expect(await one.bump('gen:a', 60_000)).toBe(1);
    expect(await two.bump('gen:a', 60_000)).toBe(2);
    expect(await two.counter('gen:a')).toBe(2);
    expect(await one.counter('gen:b')).toBe(0);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).bump('gen:c', 60_000)));
    expect(await one.counter('gen:c')).toBe(20);
  });

  it('a guarded set stores only while its counters hold, checked in Redis: a bump through another store in between keeps it out', async () => {
    const [reader, writer] = [storeOn(redis.url), storeOn(redis.url)];
    await writer.bump('gen:k', 60_000);
    const guard = { 'gen:k': await reader.counter('gen:k'), 'lists:k': await reader.counter('lists:k') };
    expect(guard).toEqual({ 'gen:k': 1, 'lists:k': 0 });
    expect(await reader.set('w', recordFor('before', 1_000, 9_000), guard)).toBe(true);
    expect((await reader.get('w'))?.value).toBe('before');

    await writer.bump('lists:k', 60_000); // a write through another gateway, after `guard` was read
    await writer.delete('w');
    expect(await reader.set('w', recordFor('read before the write', 1_000, 9_000), guard)).toBe(false);
    expect(await admin.exists('agw:w')).toBe(0);
    expect(await reader.set('w', recordFor('after', 1_000, 9_000), { ...guard, 'lists:k': 1 })).toBe(true);
    expect((await writer.get('w'))?.value).toBe('after');
    expect(await admin.pttl('agw:w')).toBeGreaterThan(8_000); // with its expiry, as an unguarded set
  });

  it('look: a record, counters and marks in one MGET, as get, counter and marked give them', async () => {
    const [one, two] = [storeOn(redis.url), storeOn(redis.url)];
    const record = recordFor({ body: 'stored' }, 1_000, 0);
    await one.set('look:r', record);
    await one.bump('look:c', 60_000);
    await one.bump('look:c', 60_000);
    await one.mark('look:m', 5_000);
    const calls: string[] = [];
    const monitor = await admin.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith('agw:look:'))) calls.push(String(args[0]).toLowerCase());
    });
    const found = await two.look('look:r', ['look:c', 'look:unset'], ['look:m', 'look:unmarked']);
    await sleep(50);
    monitor.disconnect();
    expect(found).toEqual({ record, counters: [2, 0], marks: [true, false] });
    expect(calls).toEqual(['mget']);
    expect(await two.look('look:none', [], [])).toEqual({ record: undefined, counters: [], marks: [] });
  });

  it('a mark holds for its lifetime, in Redis with that TTL, and no longer', async () => {
    const [one, two] = [storeOn(redis.url), storeOn(redis.url)];
    expect(await one.marked('seen:x')).toBe(false);
    await one.mark('seen:x', 250);
    expect(await two.marked('seen:x')).toBe(true);
    const pttl = await admin.pttl('agw:seen:x');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(250);
    await sleep(400);
    expect(await two.marked('seen:x')).toBe(false);
  });

  it('the secret is shared: two stores on one Redis get the same one, even asking at the same time', async () => {
    const stores = Array.from({ length: 5 }, () => storeOn(redis.url));
    const secrets = await Promise.all(stores.map((store) => store.secret()));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(await admin.get('agw:secret')).toBe(secrets[0]);
    expect(await storeOn(redis.url).secret()).toBe(secrets[0]);
  });

  it('a Redis that lost the secret gets it back from a store that knew it, so key ids stay the same', async () => {
    const store = storeOn(redis.url);
    const secret = await store.secret();
    await admin.flushall();
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'); // the store's connection drops
    await until('the secret to be back in Redis', async () => {
      await store.secret().catch(() => undefined);
      return (await admin.get('agw:secret')) === secret;
    });
    expect(await store.secret()).toBe(secret);
    expect(await storeOn(redis.url).secret()).toBe(secret);
  });

  it('a store whose secret was replaced in Redis (lost, then set by another gateway) takes the new one at its next check', async () => {
    const store = new RedisCacheStore(redis.url, 1_000, Date.now, 200);
    opened.push(store);
    // At hand (secretNow) only once a check has answered, and only while it is the one in use.
    expect(store.secretNow()).toBeUndefined();
    const checking = store.secret();
    expect(store.secretNow()).toBeUndefined();
    const first = await checking;
    expect(store.secretNow()).toBe(first);
    const replaced = 'f'.repeat(64);
    await admin.set('agw:secret', replaced);
    expect(await store.secret()).toBe(first); // checked at most every 200 ms here (a minute by default)
    expect(store.secretNow()).toBe(first);
    await sleep(250);
    expect(store.secretNow()).toBeUndefined(); // due for a check: whoever needs it asks secret()
    expect(await store.secret()).toBe(replaced);
    expect(store.secretNow()).toBe(replaced);
  });

  it('fails at once, never hangs, when nothing listens, and after close()', async () => {
    const store = storeOn(`redis://127.0.0.1:${await freePort()}`, 200);
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await expect(store.get('k')).rejects.toThrow();
      await expect(store.secret()).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(200 * 2 + 100);
    }
    const closed = new RedisCacheStore(redis.url, 1_000);
    await closed.secret();
    await closed.close();
    const started = performance.now();
    await expect(closed.get('k')).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(100);
  });

  // CLIENT PAUSE ALL blocks every client's commands (CLIENT UNPAUSE too) until the pause ends.
  it('a paused Redis makes each call fail at the timeout, not when Redis wakes up', async () => {
    const store = storeOn(redis.url, 150);
    await store.secret();
    await admin.client('PAUSE', 1_500, 'ALL');
    const started = performance.now();
    await expect(store.get('k')).rejects.toThrow(/did not answer within 150 ms/);
    await expect(store.marked('seen:k')).rejects.toThrow(/did not answer within 150 ms/);
    expect(performance.now() - started).toBeLessThan(2 * 150 + 500);
    await until('Redis to answer again', async () => (await store.get('k').catch(() => 'paused')) === undefined);
  });
});

// --- several gateways on one Redis ----------------------------------------------------------------

describe('two gateways on one Redis share entries with no setting but REDIS_URL', () => {
  // The store's budget is 2 s here, not 100 ms: on a busy machine Redis may answer later than that, and a
  // write it did not take in time is never retried. These tests are about sharing; the budget has its own.
  const shared = () => ({ CACHE: 'on', REDIS_URL: redis.url, CACHE_STORE_TIMEOUT_MS: SHARING_BUDGET_MS });

  it("the second gateway's first dashboard makes no upstream call after the first gateway's", async () => {
    const sandbox = await startUpstream();
    const [one, two] = [await startGateway(sandbox, shared()), await startGateway(sandbox, shared())];

    const first = await one.gql<DashboardData>(DASHBOARD);
    const data = dataOf(first);
    expect(data.website?.id).toBe('1');
    expect(restCalls(sandbox)).toHaveLength(DASHBOARD_READS);
    await cachedEntries(redis.url, DASHBOARD_READS);

    sandbox.log.reset();
    const second = await two.gql<DashboardData>(DASHBOARD);
    expect(dataOf(second)).toEqual(data);
    expect(restCalls(sandbox)).toEqual([]);
    expect(usageOf(second)).toMatchObject({ upstreamCalls: 0, cache: { hits: DASHBOARD_READS, misses: 0, stale: 0 } });
    // And the answer is the one the upstream gives.
    expect(data).toEqual((await referenceDashboard(sandbox)).data);
  });

  it("a write through one gateway drops the entry (and the key's lists) for the other", async () => {
    const sandbox = await startUpstream();
    const [one, two] = [await startGateway(sandbox, shared()), await startGateway(sandbox, shared())];
    const READ = '{ website(id: "1") { id emailReports } websites { totalCount } }';
    interface ReadData {
      website: { id: string; emailReports: boolean };
      websites: { totalCount: number };
    }

    const before = dataOf(await one.gql<ReadData>(READ));
    await cachedEntries(redis.url, 2);
    sandbox.log.reset();
    expect(dataOf(await one.gql<ReadData>(READ))).toEqual(before);
    expect(restCalls(sandbox)).toEqual([]); // both cached

    const updated = dataOf(
      await two.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, {
        id: '1',
        input: { emailReports: !before.website.emailReports },
      }),
    );
    expect(updated.updateWebsite.userErrors).toEqual([]);
    const created = dataOf(
      await two.gql<{ createWebsite: WebsitePayloadData }>(CREATE_WEBSITE, { input: { domain: 'shared-cache.example.net' } }),
    );
    expect(created.createWebsite.userErrors).toEqual([]);

    sandbox.log.reset();
    const after = dataOf(await one.gql<ReadData>(READ));
    expect(after.website.emailReports).toBe(!before.website.emailReports);
    expect(after.websites.totalCount).toBe(before.websites.totalCount + 1);
    expect(restCalls(sandbox).map((call) => call.split('?')[0])).toEqual(
      expect.arrayContaining(['GET /api/v1/websites/1', 'GET /api/v1/websites']),
    );
  });

  it.each([
    ['a key with entries', true],
    ['a key with none yet', false],
  ])('%s: a read in flight on one gateway when a write lands through the other never stores what it read', async (_name, warm) => {
    const sandbox = await startUpstream();
    const [one, two] = [await startGateway(sandbox, shared()), await startGateway(sandbox, shared())];
    const READ = '{ website(id: "1") { id emailReports } }';
    type ReadData = { website: { id: string; emailReports: boolean } };
    if (warm) {
      dataOf(await one.gql('{ websites { totalCount } }'));
      await cachedEntries(redis.url, 1);
    }
    const before = dataOf(await startGateway(sandbox, { CACHE: 'off' }).then((plain) => plain.gql<ReadData>(READ))).website.emailReports;

    // The read through `one` is worked out by the install at once, and answered 400 ms later.
    sandbox.log.reset();
    sandbox.scriptFaults([{ kind: 'delay', ms: 400 }]);
    const slow = one.gql<ReadData>(READ);
    await until('the slow read to reach the install', async () => sandbox.log.count > 0);
    const update = await two.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, { id: '1', input: { emailReports: !before } });
    expect(dataOf(update).updateWebsite.userErrors).toEqual([]);
    expect(dataOf(await slow).website.emailReports).toBe(before); // asked before the write: fair
    await sleep(200); // what `one` would store, it stores after its answer

    const stored = await keysOf(redis.url, 'agw:c:*:w:1');
    for (const key of stored) expect(JSON.parse((await admin.get(key)) ?? 'null')?.value?.emailReports).toBe(!before);
    for (const gateway of [one, two, one]) expect(dataOf(await gateway.gql<ReadData>(READ)).website.emailReports).toBe(!before);
  });

  it("gateways on one Redis agree on a key's ETags (keyed with the store's secret): a 304 through either", async () => {
    const sandbox = await startUpstream();
    const [one, two] = [await startGateway(sandbox, shared()), await startGateway(sandbox, shared())];
    const url = (client: Client) => `${client.gateway.url}/graphql?query=${encodeURIComponent('{ websites { totalCount } }')}`;
    const get = (client: Client, headers: Record<string, string> = {}) =>
      fetch(url(client), { headers: { authorization: `Bearer ${KEY_1}`, accept: 'application/json', ...headers } });
    const first = await get(one);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const etag = first.headers.get('etag') ?? 'none';
    expect(etag).toMatch(/^W\/".+"$/);
    // Another Accept: not the stored answer of the first request, but the second gateway's own ETag.
    const fromTwo = await get(two, { 'if-none-match': etag, accept: 'application/graphql-response+json' });
    expect(fromTwo.status).toBe(304);
    expect(fromTwo.headers.get('etag')).toBe(etag);
  });

  it.each(['on', 'off'])(
    'APQ (CACHE=%s): a document registered through one gateway runs by hash alone through the other',
    async (cache) => {
      const sandbox = await startUpstream();
      // The first gateway's clock is pinned a month ahead (as suites pin "today"): the document's
      // lifetime in Redis is still APQ_REDIS_TTL_S (a day).
      const ahead = Date.now() + 30 * 86_400_000;
      const env = { CACHE: cache, REDIS_URL: redis.url, CACHE_STORE_TIMEOUT_MS: SHARING_BUDGET_MS };
      const one = await startGateway(sandbox, env, { now: () => ahead });
      const two = await startGateway(sandbox, env);
      const query = `query SharedApq${cache} { websites { totalCount } }`;
      const hash = sha256Hex(query);
      const persisted = { persistedQuery: { version: 1, sha256Hash: hash } };

      const unknown = await two.post({ extensions: persisted });
      expect(errorsOf(unknown).map((error) => error.message)).toEqual(['PersistedQueryNotFound']);

      const registered = await one.post<{ websites: { totalCount: number } }>({ query, extensions: persisted });
      const totalCount = dataOf(registered).websites.totalCount;
      // Kept once the operation ran and the install accepted the key: just after the answer.
      await until('the document to be kept', async () => (await admin.get(`agw:{apq}:${hash}`)) !== null);
      expect(await admin.get(`agw:{apq}:${hash}`)).toContain('SharedApq');
      const ttl = await admin.pttl(`agw:{apq}:${hash}`);
      expect(ttl).toBeGreaterThan(0.99 * 86_400_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);

      const byHash = await two.post<{ websites: { totalCount: number } }>({ extensions: persisted });
      expect(dataOf(byHash).websites.totalCount).toBe(totalCount);
    },
  );
});

describe('APQ in Redis: only for accepted keys, within a bound shared by the gateways', () => {
  const apqGateway = (sandbox: Sandbox, env: Record<string, string> = {}) =>
    startGateway(sandbox, { REDIS_URL: redis.url, CACHE_STORE_TIMEOUT_MS: SHARING_BUDGET_MS, ...env });
  const registration = (name: string) => {
    const query = `query Flood${name} { website(id: "1") { id } }`;
    const hash = sha256Hex(query);
    return { query, hash, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } };
  };
  type IdData = { website: { id: string } };

  it('keeps nothing sent with no key or with a key the install refuses', async () => {
    const gateway = await apqGateway(await startUpstream());
    for (let i = 0; i < 20; i++) {
      const { query, extensions } = registration(`Stranger${i}`);
      const headers: Record<string, string> = i % 2 === 0 ? {} : { authorization: 'Bearer not-a-real-key' };
      const response = await postGraphQL(`${gateway.gateway.url}/graphql`, { query, extensions }, headers);
      expect(errorsOf(response)[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    await sleep(200); // what would be kept is kept just after the answer
    expect(await keysOf(redis.url, 'agw:{apq}:*')).toEqual([]);
  });

  it('keeps APQ_MAX_ENTRIES documents for all gateways together, the oldest out first', async () => {
    const sandbox = await startUpstream();
    const env = { APQ_MAX_ENTRIES: '3' };
    const [one, two] = [await apqGateway(sandbox, env), await apqGateway(sandbox, env)];
    const sent = Array.from({ length: 5 }, (_, i) => registration(`Bounded${i}`));
    for (const [i, { query, hash, extensions }] of sent.entries()) {
      const gateway = i % 2 === 0 ? one : two;
      expect(dataOf(await gateway.post<IdData>({ query, extensions })).website.id).toBe('1');
      await until(`document ${i} to be kept`, async () => (await admin.get(`agw:{apq}:${hash}`)) !== null);
    }
    const kept = await Promise.all(sent.map(({ hash }) => admin.get(`agw:{apq}:${hash}`)));
    expect(kept.map((document) => document !== null)).toEqual([false, false, true, true, true]);
    expect(await admin.zcard('agw:{apq}:index')).toBe(3);
    const bytes = sent.slice(2).reduce((sum, { query }) => sum + Buffer.byteLength(query), 0);
    expect(Number(await admin.get('agw:{apq}:bytes'))).toBe(bytes);
    // The evicted one is unknown to both gateways; a kept one runs by hash on either.
    expect(errorsOf(await one.post({ extensions: sent[0]!.extensions }))[0]?.message).toBe('PersistedQueryNotFound');
    expect(dataOf(await two.post<IdData>({ extensions: sent[2]!.extensions })).website.id).toBe('1');
  });

  it('keeps APQ_MAX_BYTES of documents, and none larger than it', async () => {
    const gateway = await apqGateway(await startUpstream(), { APQ_MAX_BYTES: '120' });
    const small = registration('Small');
    const other = registration('Other');
    const large = registration(`Large${'x'.repeat(100)}`);
    for (const { query, extensions } of [small, other, large]) dataOf(await gateway.post<IdData>({ query, extensions }));
    await sleep(200);
    expect(await admin.get(`agw:{apq}:${large.hash}`)).toBeNull();
    expect(await admin.get(`agw:{apq}:${small.hash}`)).not.toBeNull();
    expect(await admin.get(`agw:{apq}:${other.hash}`)).not.toBeNull();
    expect(Number(await admin.get('agw:{apq}:bytes'))).toBeLessThanOrEqual(120);
  });
});

// --- Redis failing --------------------------------------------------------------------------------

describe('a failing Redis costs a request at most the store timeout, never its answer', () => {
  const TIMEOUT_MS = 200;
  /** Generous room for the machine (CI runners are slow and shared); far below the pauses used. */
  const SLACK_MS = 1_000;

  let own: RedisServer | undefined;
  afterEach(async () => {
    await own?.close();
    own = undefined;
  });

  it('GET /ready reports the Redis connection, and stays 200 while Redis is down (reported, not decisive)', async () => {
    own = await startRedis();
    const gateway = await startGateway(await startUpstream(), {
      CACHE: 'on',
      REDIS_URL: own.url,
      CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const ready = () =>
      fetch(`${gateway.gateway.url}/ready`).then(async (response) => ({ status: response.status, body: await response.json() }));
    await until('the store to connect', async () => (await ready()).body.store === 'redis ready');
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready', upstreamBreaker: 'closed', store: 'redis ready' } });
    await own.kill();
    await until('the store to be reported down', async () => (await ready()).body.store !== 'redis ready');
    const down = await ready();
    expect(down.status).toBe(200);
    expect(down.body.store).toMatch(/^redis (reconnecting|connecting|close|end)$/);
  });

  it('Redis killed mid-run: answers come from the upstream, in time, with the warn line and no 5xx', async () => {
    own = await startRedis();
    const sandbox = await startUpstream();
    const { data: reference, ms: upstreamMs } = await referenceDashboard(sandbox);
    const { logger, lines } = capturedLog();
    const gateway = await startGateway(
      sandbox,
      { CACHE: 'on', REDIS_URL: own.url, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) },
      { logger },
    );

    expect(dataOf(await gateway.gql<DashboardData>(DASHBOARD))).toEqual(reference);
    await cachedEntries(own.url, DASHBOARD_READS);
    sandbox.log.reset();
    expect(usageOf(await gateway.gql(DASHBOARD)).upstreamCalls).toBe(0); // served from Redis

    // Killed while requests are on their way, then requests while it is gone.
    const during = Array.from({ length: 5 }, () => gateway.timed<DashboardData>(DASHBOARD));
    await own.kill();
    const results = [...(await Promise.all(during))];
    for (let i = 0; i < 5; i++) results.push(await gateway.timed<DashboardData>(DASHBOARD));
    results.push(...(await Promise.all(Array.from({ length: 5 }, () => gateway.timed<DashboardData>(DASHBOARD)))));

    for (const { response, ms } of results) {
      expect(response.status).toBe(200);
      expect(dataOf(response)).toEqual(reference);
      expect(ms).toBeLessThan(TIMEOUT_MS + upstreamMs + SLACK_MS);
    }
    expect(usageOf(results[results.length - 1]?.response as GraphQLResponse<unknown>).upstreamCalls).toBe(DASHBOARD_READS);
    expect(restCalls(sandbox).length).toBeGreaterThanOrEqual(10 * DASHBOARD_READS);

    // A write while Redis is gone: applied and answered.
    const update = await gateway.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, { id: '1', input: { excludeBots: true } });
    expect(update.status).toBe(200);
    expect(dataOf(update).updateWebsite.userErrors).toEqual([]);

    const warned = lines.filter((line) => line.msg === STORE_FAILED);
    expect(warned.length).toBeGreaterThan(0);
    expect(warned.every((line) => line.level === 40)).toBe(true);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]); // no error lines: a miss, not a failure
  });

  it('Redis restarted empty: the gateways use it again, still sharing entries with one started after', async () => {
    own = await startRedis();
    const sandbox = await startUpstream();
    const env = { CACHE: 'on', REDIS_URL: own.url, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) };
    const before = await startGateway(sandbox, env);
    const reference = dataOf(await before.gql<DashboardData>(DASHBOARD));
    await cachedEntries(own.url, DASHBOARD_READS);

    await own.kill();
    expect(dataOf(await before.gql<DashboardData>(DASHBOARD))).toEqual(reference);
    own = await startRedis({ port: own.port }); // same address, no data
    await until(
      'the gateway to cache in the restarted Redis',
      async () => {
        expect(dataOf(await before.gql<DashboardData>(DASHBOARD))).toEqual(reference);
        return (await keysOf(env.REDIS_URL, 'agw:c:*')).length >= DASHBOARD_READS;
      },
      10_000,
    );
    await cachedEntries(own.url, DASHBOARD_READS);

    const after = await startGateway(sandbox, env);
    sandbox.log.reset();
    const response = await after.gql<DashboardData>(DASHBOARD);
    expect(dataOf(response)).toEqual(reference);
    expect(restCalls(sandbox)).toEqual([]);
  });

  it('REDIS_URL where nothing listens: correct answers, no slower than the store timeout plus the upstream', async () => {
    const sandbox = await startUpstream();
    const { data: reference, ms: upstreamMs } = await referenceDashboard(sandbox);
    const { logger, lines } = capturedLog();
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const gateway = await startGateway(
      sandbox,
      { CACHE: 'on', REDIS_URL: nowhere, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) },
      { logger },
    );

    for (let i = 0; i < 3; i++) {
      const { response, ms } = await gateway.timed<DashboardData>(DASHBOARD);
      expect(response.status).toBe(200);
      expect(dataOf(response)).toEqual(reference);
      expect(ms).toBeLessThan(TIMEOUT_MS + upstreamMs + SLACK_MS);
    }
    // APQ in an unreachable Redis: unknown documents, never a failed request.
    const query = '{ websites { totalCount } }';
    const hashOnly = await gateway.post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } } });
    expect(errorsOf(hashOnly).map((error) => error.message)).toEqual(['PersistedQueryNotFound']);
    expect(hashOnly.status).toBe(200);
    expect(lines.some((line) => line.msg === STORE_FAILED && line.level === 40)).toBe(true);
    // The log names the operation, never the URL.
    expect(lines.map((line) => JSON.stringify(line)).join('\n')).not.toContain(nowhere);
  });

  it('a paused Redis (CLIENT PAUSE) delays a request by the store timeout at most, not by the pause', async () => {
    const PAUSE_MS = 2_500;
    const sandbox = await startUpstream();
    const { data: reference, ms: upstreamMs } = await referenceDashboard(sandbox);
    const { logger, lines } = capturedLog();
    const gateway = await startGateway(
      sandbox,
      { CACHE: 'on', REDIS_URL: redis.url, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) },
      { logger },
    );
    expect(dataOf(await gateway.gql<DashboardData>(DASHBOARD))).toEqual(reference);
    await cachedEntries(redis.url, DASHBOARD_READS);

    // Every client's commands wait until the pause ends (CLIENT UNPAUSE's too).
    await admin.client('PAUSE', PAUSE_MS, 'ALL');
    const pausedAt = performance.now();
    const { response, ms } = await gateway.timed<DashboardData>(DASHBOARD);
    expect(response.status).toBe(200);
    expect(dataOf(response)).toEqual(reference);
    expect(ms).toBeLessThan(TIMEOUT_MS + upstreamMs + SLACK_MS);
    expect(performance.now() - pausedAt).toBeLessThan(PAUSE_MS); // answered while Redis still slept
    expect(lines.some((line) => line.msg === STORE_FAILED && line.level === 40)).toBe(true);
    // Once Redis answers again, so does the cache.
    await until('cache hits again', async () => usageOf(await gateway.gql(DASHBOARD)).upstreamCalls === 0);
  });

  // CACHE_STORE_TIMEOUT_MS is the whole request's: the stored answers' lookup in front of GraphQL spends
  // it with the read cache's reads. Counted, not timed: how many store reads the request waited on.
  it.each(['paused', 'slow'])("a %s Redis costs a request one store budget in all, the stored answers' lookup included", async (kind) => {
    own = await startRedis();
    const sandbox = await startUpstream();
    const { data: reference } = await referenceDashboard(sandbox);
    const proxy = await redisProxy(own.port);
    opened.push(proxy);
    const { logger, lines } = capturedLog();
    const gateway = await startGateway(
      sandbox,
      { CACHE: 'on', REDIS_URL: proxy.url, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) },
      { logger },
    );
    expect(dataOf(await gateway.gql<DashboardData>(DASHBOARD))).toEqual(reference);
    await cachedEntries(own.url, DASHBOARD_READS);
    expect(lines.filter((line) => line.msg === STORE_FAILED)).toEqual([]);

    const pausing = new Redis(own.url, { maxRetriesPerRequest: 1 });
    opened.push({ close: async () => pausing.disconnect() });
    if (kind === 'paused') await pausing.client('PAUSE', 10_000, 'ALL');
    else proxy.delayMs = 3 * TIMEOUT_MS;
    const response = await gateway.post<DashboardData>({ query: DASHBOARD }); // the stored answer's request
    expect(dataOf(response)).toEqual(reference);
    // The reads the request waited on and did not get (the writes after its answer aside).
    const READS = new Set(['secret', 'look', 'counter', 'get', 'marked']);
    const failed = lines.filter((line) => line.msg === STORE_FAILED && READS.has(line.operation ?? ''));
    expect(failed.map((line) => line.operation)).toEqual(['look']);
    await own.close(); // paused: a Redis that would hold the next test's commands
  });
});

describe('a slow Redis (answering within the store timeout)', () => {
  const TIMEOUT_MS = 250;
  const DELAY_MS = 150; // every answer 150 ms late: slow, but never past the timeout

  async function slowSetup() {
    const sandbox = await startUpstream();
    const { data: reference, ms: upstreamMs } = await referenceDashboard(sandbox);
    const proxy = await redisProxy(redis.port, DELAY_MS);
    opened.push(proxy);
    const gateway = await startGateway(sandbox, { CACHE: 'on', REDIS_URL: proxy.url, CACHE_STORE_TIMEOUT_MS: String(TIMEOUT_MS) });
    // The first request may find the connection still being made (one more slow round trip).
    await until('the dashboard cached through the slow Redis', async () => {
      expect(dataOf(await gateway.gql<DashboardData>(DASHBOARD))).toEqual(reference);
      await sleep(2 * DELAY_MS); // the entries are written after the answer
      return (await keysOf(redis.url, 'agw:c:*')).length >= DASHBOARD_READS;
    });
    return { sandbox, gateway, reference, upstreamMs };
  }

  it('gives correct answers, whatever part the slow store could give within the budget', async () => {
    const { gateway, reference, upstreamMs } = await slowSetup();
    const { response, ms } = await gateway.timed<DashboardData>(DASHBOARD);
    expect(dataOf(response)).toEqual(reference);
    expect(ms).toBeLessThan(TIMEOUT_MS + upstreamMs + 1_000);
  });

  // CACHE_STORE_TIMEOUT_MS is one request's budget for the store, not each call's: a Redis answering
  // just under it cannot make a request wait for it several times in a row.
  it('costs a request no more than the store timeout plus the upstream', async () => {
    const { gateway, reference, upstreamMs } = await slowSetup();
    const { response, ms } = await gateway.timed<DashboardData>(DASHBOARD);
    expect(dataOf(response)).toEqual(reference);
    expect(ms).toBeLessThan(TIMEOUT_MS + upstreamMs + 100);
  });
});

// --- configuration --------------------------------------------------------------------------------

describe('REDIS_URL', () => {
  const problemsOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('takes redis:// and rediss:// URLs (with credentials and a database), and is unset by default', () => {
    expect(loadConfig({}).cache.redisUrl).toBeNull();
    for (const url of ['redis://127.0.0.1:6379', 'redis://:s3cret@cache.internal:6380/2', 'rediss://user:s3cret@cache.example.net']) {
      expect(loadConfig({ REDIS_URL: url }).cache.redisUrl).toBe(url);
    }
  });

  it('takes a cluster by its seed nodes and a primary that Sentinel watches, and reads them', () => {
    const urls = {
      cluster: 'redis-cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002',
      tlsCluster: 'rediss-cluster://gateway:s%40cret@node-1.cache.internal:6379',
      sentinel: 'redis-sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26379/mymaster',
      tlsSentinel: 'rediss-sentinel://sentinel-1.internal:26379/cache-primary',
    };
    for (const url of Object.values(urls)) expect(loadConfig({ REDIS_URL: url }).cache.redisUrl).toBe(url);
    expect(parseRedisUrl(urls.cluster)).toEqual({
      target: {
        kind: 'cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7001 },
          { host: '::1', port: 7002 },
        ],
        tls: false,
      },
    });
    expect(parseRedisUrl(urls.tlsCluster)).toEqual({
      target: {
        kind: 'cluster',
        nodes: [{ host: 'node-1.cache.internal', port: 6379 }],
        tls: true,
        username: 'gateway',
        password: 's@cret',
      },
    });
    expect(parseRedisUrl(urls.sentinel)).toEqual({
      target: {
        kind: 'sentinel',
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '10.0.0.2', port: 26379 },
        ],
        name: 'mymaster',
        tls: false,
        password: 's3cret',
      },
    });
    expect(parseRedisUrl(urls.tlsSentinel)).toMatchObject({ target: { kind: 'sentinel', name: 'cache-primary', tls: true } });
  });

  it.each([
    ['http://user:hunter2@cache.internal:6379', 'hunter2', 'must be a redis://, rediss://, redis-cluster://'],
    ['https://:hunter2@cache.internal', 'hunter2', 'must be a redis://, rediss://, redis-cluster://'],
    ['memcached://cache.internal:11211', undefined, 'must be a redis://, rediss://, redis-cluster://'],
    ['cache.internal:6379', undefined, 'must be a redis://, rediss://, redis-cluster://'],
    ['redis-cluster://:hunter2@10.0.0.1', 'hunter2', 'cluster nodes must be host:port'],
    ['redis-cluster://10.0.0.1:7000,,10.0.0.2:7001', undefined, 'cluster nodes must be host:port'],
    ['redis-cluster://10.0.0.1:70000', undefined, 'cluster nodes must be host:port'],
    ['redis-cluster://10.0.0.1:7000/2', undefined, 'redis-cluster:// takes no path'],
    ['redis://:hunter2@10.0.0.1:99999', 'hunter2', 'must be redis://host:port, with a host and a port from 1 to 65535'],
    ['redis://:hunter2@/0', 'hunter2', 'must be redis://host:port, with a host and a port from 1 to 65535'],
    ['redis-sentinel://:hunter2@10.0.0.1:26379', 'hunter2', "redis-sentinel:// needs the primary's name"],
    ['redis-sentinel://:hunter2%zz@10.0.0.1:26379/mymaster', 'hunter2', 'has a user or password that is not URL-encoded'],
    ['redis-sentinel://:hunter2@10.0.0.1:26379/my%zz', 'hunter2', "has a primary's name that is not URL-encoded"],
  ])('refuses %s, naming REDIS_URL and not echoing its password', (url, password, problem) => {
    const message = problemsOf({ REDIS_URL: url });
    expect(message).toContain(`REDIS_URL ${problem}`);
    if (password !== undefined) expect(message).not.toContain(password);
  });

  it('reports REDIS_URL with the other problems at once', () => {
    const message = problemsOf({ REDIS_URL: 'http://x', CACHE_STORE_TIMEOUT_MS: '0' });
    expect(message).toContain('REDIS_URL');
    expect(message).toContain('CACHE_STORE_TIMEOUT_MS');
  });

  it.each([
    ['http://user:hun/ter2@cache.internal', 'hun/ter2'],
    ['http://user:p@hunter2@cache.internal', 'hunter2'],
    ['user:hunter2@cache.internal:6379', 'hunter2'],
  ])('refuses %s without echoing its password', (url, password) => {
    expect(problemsOf({ REDIS_URL: url })).not.toContain(password);
  });
});
