// A write always lands: a write made while Redis cannot take its drop (cut, paused, slow, full with
// `noeviction`) is never followed by an answer from before it, once Redis is back. Real redis-servers
// (test/redis.ts), a TCP proxy in front of them for the cut and the slow Redis, two gateways on the same
// Redis and the sandbox over real HTTP.
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { RedisCacheStore } from '../../src/cache/redis-store.js';
import { UnsettledWrites } from '../../src/cache/unsettled.js';
import { safeStore } from '../../src/cache/waiting.js';
import { keyIdOf } from '../../src/api-key.js';
import { storeNames } from '../../src/cache/keys.js';
import { KEY_1, TODAY, UPDATE_WEBSITE, dataOf, postGraphQL, testConfig, until as waitUntil, type WebsitePayloadData } from '../fixture.js';
import { describe, redisProxy, startRedis, type RedisProxy, type RedisServer } from '../redis.js';

// A safety net only: each wait ends on the event it means. A busy machine can take long over a step.
const SAFETY_NET_MS = 60_000;
const until = (what: string, check: () => Promise<boolean>): Promise<void> => waitUntil(what, check, SAFETY_NET_MS);

const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const READ = '{ website(id: "1") { id emailReports } }';
type ReadData = { website: { id: string; emailReports: boolean } };

/** One gateway on `url`, and its reads of READ (the same request each time: a stored answer may answer it). */
async function gatewayOn(sandbox: Sandbox, url: string): Promise<{ gateway: Gateway; read(): Promise<boolean> }> {
  const gateway = await createGateway(testConfig(sandbox.url, { CACHE: 'on', REDIS_URL: url }));
  opened.push(gateway);
  const endpoint = `${gateway.url}/graphql`;
  const authorization = `Bearer ${KEY_1}`;
  return {
    gateway,
    read: async () => dataOf(await postGraphQL<ReadData>(endpoint, { query: READ }, { authorization })).website.emailReports,
  };
}

interface Fault {
  /** The Redis the gateways use (the proxy's, or the server's). */
  url: string;
  on(): Promise<void>;
  /** Redis answers as before, with what it held. */
  off(): Promise<void>;
}

/** What each fault of the red team's does to Redis, and how it ends. */
async function faultOf(kind: string, server: RedisServer, admin: Redis): Promise<Fault> {
  const proxied = async (): Promise<RedisProxy> => {
    const proxy = await redisProxy(server.port);
    opened.push(proxy);
    return proxy;
  };
  switch (kind) {
    case 'cut': {
      const proxy = await proxied();
      return { url: proxy.url, on: async () => proxy.cut(), off: async () => proxy.restore() };
    }
    case 'slow': {
      const proxy = await proxied();
      return {
        url: proxy.url,
        on: async () => {
          proxy.delayMs = 300;
        },
        off: async () => {
          proxy.delayMs = 0;
        },
      };
    }
    case 'paused':
      return {
        url: server.url,
        on: async () => void (await admin.client('PAUSE', 1_500, 'ALL')),
        off: async () => void (await admin.ping()), // answered once the pause is over
      };
    case 'full':
      return {
        url: server.url,
        on: async () => {
          await admin.config('SET', 'maxmemory', '1');
          await expect(admin.set('agw:probe', 'x')).rejects.toThrow(/OOM/);
        },
        off: async () => void (await admin.config('SET', 'maxmemory', '0')),
      };
    default:
      throw new Error(`no fault ${kind}`);
  }
}

describe('a write while Redis cannot take its drop: nothing from before it is served once Redis is back', () => {
  it.each(['cut', 'paused', 'slow', 'full'])(
    'Redis %s during the write',
    async (kind) => {
      const server = await startRedis({ args: ['--maxmemory-policy', 'noeviction'] });
      opened.push(server);
      const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
      opened.push({ close: () => admin.disconnect() });
      const fault = await faultOf(kind, server, admin);
      const sandbox = await startSandbox({ port: 0, today: TODAY });
      opened.push(sandbox);
      const writer = await gatewayOn(sandbox, fault.url);
      const other = await gatewayOn(sandbox, fault.url);

      // The website and the stored answer of READ in Redis, read by both gateways from there. Written
      // after the answer, within the store's budget: on a busy machine a write can miss it, and the next
      // read writes again.
      const before = await writer.read();
      await until('the entry and the stored answer in Redis', async () => {
        const [entries, answers] = await Promise.all([admin.keys('agw:c:*'), admin.keys('agw:r:*')]);
        if (entries.length > 0 && answers.length > 0) return true;
        expect(await writer.read()).toBe(before);
        return false;
      });
      expect(await other.read()).toBe(before);
      expect(await writer.read()).toBe(before);

      await fault.on();
      const update = await postGraphQL<{ updateWebsite: WebsitePayloadData }>(
        `${writer.gateway.url}/graphql`,
        { query: UPDATE_WEBSITE, variables: { id: '1', input: { emailReports: !before } } },
        { authorization: `Bearer ${KEY_1}` },
      );
      expect(dataOf(update).updateWebsite.userErrors).toEqual([]);
      await fault.off();

      // The other gateway, from the moment Redis is back: until the drop is in Redis (a counter of the
      // key moved on), and 15 reads after it. Not one answer from before the write.
      const dropped = async (): Promise<boolean> => {
        const counters = [...(await admin.keys('agw:gen:*')), ...(await admin.keys('agw:lists:*'))];
        const values = counters.length === 0 ? [] : await admin.mget(counters);
        return values.some((value) => Number(value) > 0);
      };
      const fromOther: boolean[] = [];
      const deadline = Date.now() + SAFETY_NET_MS;
      while (!(await dropped())) {
        if (Date.now() > deadline) throw new Error(`the write was not dropped in Redis in ${SAFETY_NET_MS} ms (${kind})`);
        fromOther.push(await other.read());
      }
      for (let i = 0; i < 15; i++) fromOther.push(await other.read());
      expect(fromOther.filter((emailReports) => emailReports === before)).toEqual([]);
      // The gateway that wrote, whether or not its drop landed.
      const fromWriter: boolean[] = [];
      for (let i = 0; i < 15; i++) fromWriter.push(await writer.read());
      expect(fromWriter.filter((emailReports) => emailReports === before)).toEqual([]);
    },
    3 * SAFETY_NET_MS,
  );
});

describe('more keys owed a drop than the gateway tells apart', () => {
  it(
    'every key reads past the store while Redis is cut; once it is back, every key with entries is dropped and the store used again',
    async () => {
      const server = await startRedis();
      opened.push(server);
      const proxy = await redisProxy(server.port);
      opened.push(proxy);
      const store = new RedisCacheStore(proxy.url, 500);
      opened.push(store);
      // A bound of two keys: the third owed during the cut is forgotten.
      const unsettled = new UnsettledWrites(store, safeStore(undefined), 60_000, 2);
      opened.push({ close: () => unsettled.close() });
      const secret = await store.secret();
      // Keys with entries in the store (their `has` marks), none of them among those owed.
      const withEntries = Array.from({ length: 5 }, (_, i) => keyIdOf(secret, `Bearer with-entries-${i}`));
      for (const keyId of withEntries) await store.mark(storeNames.hasEntries(keyId), 60_000);

      proxy.cut();
      const owed = ['Bearer owed-1', 'Bearer owed-2', 'Bearer owed-3'];
      for (const authorization of owed) unsettled.pend(authorization);
      expect(unsettled.owes('Bearer never-written')).toBe(true);

      proxy.restore();
      await until('the store used again', async () => !unsettled.owes('Bearer never-written'));
      expect(owed.some((authorization) => unsettled.owes(authorization))).toBe(false);
      const generations = await Promise.all(withEntries.map((keyId) => store.counter(storeNames.generation(keyId))));
      expect(generations.filter((generation) => generation === 0)).toEqual([]);
      // The keys it knew got their drop too.
      expect(await store.counter(storeNames.generation(keyIdOf(secret, 'Bearer owed-1')))).toBeGreaterThan(0);
    },
    2 * SAFETY_NET_MS,
  );
});
