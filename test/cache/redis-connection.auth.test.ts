// What a gateway makes of Redis at start and of its credentials, over real servers: a Sentinel with
// `requirepass` reached with the sentinels' own password from REDIS_URL's query; NOAUTH and WRONGPASS
// named in /ready and in the log, saying whose credentials (the sentinels' or the data nodes', on one
// Redis, under Sentinel and on a cluster); and a maxmemory-policy that evicts keys without an expiry
// (allkeys-*) said in the log at start.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { KEY_1, dataOf, startStack, type Stack, until } from '../fixture.js';
import { describeNeeding } from '../needs.js';
import { describe, startRedis, type RedisServer } from '../redis.js';
import { type RedisCluster, type RedisSentinels, startCluster, startSentinels } from '../redis-topologies.js';

interface LogLine {
  level: number;
  msg: string;
  error?: string;
  maxmemoryPolicy?: string;
}

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

/** A gateway on `redisUrl` with the read cache on, and the lines it logs (warn and above, or from `level`). */
async function gatewayOn(redisUrl: string, level = 'warn'): Promise<{ stack: Stack; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  // No time: a line is compared whole.
  const logger = pino({ level, base: null, timestamp: false }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  const stack = await startStack({ env: { REDIS_URL: redisUrl, CACHE: 'on' }, gateway: { logger } });
  stacks.push(stack);
  return { stack, lines };
}

/** /ready's word on the store. */
async function storeState(stack: Stack): Promise<string> {
  return ((await (await fetch(`${stack.gateway.url}/ready`)).json()) as { store: string }).store;
}

/** Website 1 read until an answer comes from the store (the entry is stored after the first answer): its upstream calls. */
async function readUntilCached(stack: Stack): Promise<number> {
  let calls = Number.POSITIVE_INFINITY;
  for (let tries = 0; calls > 0 && tries < 50; tries++) {
    const response = await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }', {}, KEY_1);
    expect(dataOf(response).website.id).toBe('1');
    calls = (response.extensions as { upstreamCalls: number }).upstreamCalls;
    if (calls > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return calls;
}

const NOT_USABLE = 'Redis not usable at start: reading from the upstream until it is';

const WRONG_PASS = 'WRONGPASS invalid username-password pair or user is disabled.';
const WRONG_DATA_PASSWORD = `Redis refused the credentials (${WRONG_PASS}): REDIS_URL's user and password`;

/** Waits for /ready's store to end with `named`, and for the line at start, which names it too. */
async function refusalNamed({ stack, lines }: { stack: Stack; lines: LogLine[] }, named: string): Promise<void> {
  await until('/ready to name the refusal', async () => (await storeState(stack)).endsWith(named));
  await until('the log line at start', () => lines.some((line) => line.msg === NOT_USABLE));
  expect(lines.find((line) => line.msg === NOT_USABLE)?.error).toContain(named.replace(/^redis /, ''));
}

describe('a Sentinel with requirepass', () => {
  const SENTINEL_PASSWORD = 'sentinel s3cret+/@'; // characters a URL must encode
  let sentinels: RedisSentinels;
  beforeAll(async () => {
    sentinels = await startSentinels({ sentinelPassword: SENTINEL_PASSWORD, user: { name: 'gateway', password: 'data-s3cret' } });
  }, 60_000);
  afterAll(() => sentinels?.close());

  it('is reached with the sentinels password from the URL query: entries stored and read back', async () => {
    expect(sentinels.url).toMatch(/\/mymaster\?sentinelPassword=sentinel%20s3cret%2B%2F%40$/);
    const { stack, lines } = await gatewayOn(sentinels.url);
    expect(await readUntilCached(stack)).toBe(0);
    expect(await storeState(stack)).toBe('redis ready');
    expect(lines.filter((line) => line.msg === NOT_USABLE)).toEqual([]);
  });

  it.each([
    [
      'without it, nor a password in the URL',
      (url: string) => url.replace(/\?.*$/, '').replace(/\/\/[^@]*@/, '//'),
      'NOAUTH Authentication required.',
    ],
    ["without it: the URL's password, the data nodes', is tried", (url: string) => url.replace(/\?.*$/, ''), WRONG_PASS],
    ['with a wrong one', (url: string) => url.replace(/\?.*$/, '?sentinelPassword=wrong'), WRONG_PASS],
  ])('%s: /ready and the log name the refusal, and requests are answered from the install', async (_name, urlOf, refusal) => {
    const gateway = await gatewayOn(urlOf(sentinels.url));
    await refusalNamed(
      gateway,
      `redis connecting: the sentinels refused the credentials (${refusal}): REDIS_URL's sentinelUsername and sentinelPassword (its password when the query has none)`,
    );
    const response = await gateway.stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }', {}, KEY_1);
    expect(dataOf(response).website.id).toBe('1');
  });

  it("with the sentinels' password and a wrong user's: names the data node's credentials", async () => {
    await refusalNamed(await gatewayOn(sentinels.url.replace('data-s3cret', 'wrong')), WRONG_DATA_PASSWORD);
  });
});

describe('a Sentinel set up with one password, for the sentinels and the data nodes alike', () => {
  const SHARED = 'shared s3cret+/@';
  let sentinels: RedisSentinels;
  beforeAll(async () => {
    sentinels = await startSentinels({ sentinelPassword: SHARED, user: { name: 'gateway', password: SHARED } });
  }, 60_000);
  afterAll(() => sentinels?.close());

  it("is reached with the URL's password alone: it serves the sentinels when the query gives none", async () => {
    const url = sentinels.url.replace(/\?.*$/, '');
    expect(url).toMatch(/^redis-sentinel:\/\/gateway:shared%20s3cret%2B%2F%40@[^?]+\/mymaster$/);
    const { stack, lines } = await gatewayOn(url);
    expect(await readUntilCached(stack)).toBe(0);
    expect(await storeState(stack)).toBe('redis ready');
    expect(lines.filter((line) => line.msg === NOT_USABLE)).toEqual([]);
  });
});

// A cluster is joined by redis-cli (test/needs.ts).
describeNeeding('redis-server', 'redis-cli')('a Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startCluster({ user: { name: 'gateway', password: 'data-s3cret' } });
  }, 60_000);
  afterAll(() => cluster?.close());

  it("with a wrong password: /ready and the log name the nodes' WRONGPASS", async () => {
    await refusalNamed(await gatewayOn(cluster.url.replace('data-s3cret', 'wrong')), WRONG_DATA_PASSWORD);
  });
});

describe('one Redis', () => {
  const servers: RedisServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });
  const start = async (args: string[], password?: string): Promise<RedisServer> => {
    const server = await startRedis({ args, ...(password ? { password } : {}) });
    servers.push(server);
    return server;
  };

  it('with a wrong password: /ready and the log say WRONGPASS and where the password is, never the password', async () => {
    const server = await start(['--requirepass', 'right'], 'right');
    // A user and a password with every character a URL must encode, encoded: a valid REDIS_URL.
    const password = 'Pw9q/#? @:%Zk7v';
    const gateway = await gatewayOn(server.url.replace('redis://', `redis://Uzr9x:${encodeURIComponent(password)}@`));
    await refusalNamed(gateway, WRONG_DATA_PASSWORD);
    const ready = await (await fetch(`${gateway.stack.gateway.url}/ready`)).text();
    for (const text of [ready, JSON.stringify(gateway.lines)])
      for (const part of ['Uzr9x', 'Pw9q', 'Zk7v', encodeURIComponent(password)]) expect(text).not.toContain(part);
  });

  it('with maxmemory-policy allkeys-lru: a warning at start naming it and the policy to set', async () => {
    const server = await start(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    const { lines } = await gatewayOn(server.url);
    await until('the warning', () => lines.some((line) => line.maxmemoryPolicy === 'allkeys-lru'));
    expect(lines.find((line) => line.maxmemoryPolicy === 'allkeys-lru')?.msg).toMatch(
      /^Redis's maxmemory-policy allkeys-lru evicts keys that have no expiry: .*; set maxmemory-policy volatile-lru$/,
    );
  });

  it('with volatile-lru, as the docs ask: no warning once the policy was read', async () => {
    const server = await start(['--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru']);
    const { lines } = await gatewayOn(server.url, 'debug');
    await until('the gateway to read the policy', () => lines.some((line) => line.msg === "Redis's maxmemory-policy read"));
    expect(lines).toEqual([{ level: 20, maxmemoryPolicy: 'volatile-lru', msg: "Redis's maxmemory-policy read" }]);
  });
});
