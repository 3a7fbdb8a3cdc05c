// A connection to Redis as the gateway uses one (the read cache's store, the live pollers' share): every
// call bounded in time, none piling up behind an outage, and ioredis loaded only with REDIS_URL. REDIS_URL
// names one Redis, a Redis Cluster by seed nodes, or a primary that Sentinel watches (docs/configuration.md);
// ioredis follows MOVED, ASK, a new master and a failover. A refusal of the credentials is named in what the
// calls fail with and in /ready. On a cluster, names used together share a hash tag (keys.ts).
import { createRequire } from 'node:module';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { z } from 'zod';
import { custom } from '../settings.js';

/** Where everything of the gateway's lives in Redis. */
export const PREFIX = 'agw:';

/** What REDIS_URL names: one Redis, a cluster by its seed nodes, or a primary that Sentinel watches. */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; username?: string; password?: string; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: HostPort[];
      name: string;
      /** The primary's and its replicas' credentials (the URL's); the sentinels' own (the query's). */
      username?: string;
      password?: string;
      sentinelUsername?: string;
      sentinelPassword?: string;
      tls: boolean;
    };

interface HostPort {
  host: string;
  port: number;
}

/** REDIS_URL: the Redis the gateways share (cache, persisted queries, live pollers); none: this process's memory. */
export const REDIS_SETTINGS = {
  redisUrl: custom(
    'REDIS_URL',
    z.string().check((context) => {
      const parsed = parseRedisUrl(context.value);
      // The value is not echoed: a Redis URL may carry a password.
      if ('problem' in parsed) context.issues.push({ code: 'custom', message: `REDIS_URL ${parsed.problem}`, input: context.value });
    }),
    {
      fallback: null as string | null,
      shown: null,
      unit: 'a Redis URL (below)',
      doc: 'the cache, the persisted-query registry and the live pollers in Redis, shared by gateways',
    },
  ),
};

const MULTI_NODE = /^(rediss?)-(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/([^?#/]*))?(?:\?([^#]*))?$/;
/** What a redis-sentinel:// URL's query may say: the sentinels' own credentials. */
const SENTINEL_QUERY = ['sentinelUsername', 'sentinelPassword'] as const;
const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/;

/** REDIS_URL read, or why it is none of the forms above (`problem` never echoes the value: it may hold a password). */
export function parseRedisUrl(value: string): { target: RedisTarget } | { problem: string } {
  if (/^rediss?:\/\/\S+$/.test(value)) {
    // ioredis would take a port out of range, or no host, and never connect: refused here instead.
    if (!URL.parse(value)?.hostname) return { problem: 'must be redis://host:port, with a host and a port from 1 to 65535' };
    return { target: { kind: 'single', url: value } };
  }
  const match = MULTI_NODE.exec(value);
  if (!match)
    return { problem: 'must be a redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel:// or rediss-sentinel:// URL' };
  const [, scheme, kind, userinfo, hosts = '', path, query] = match;
  const nodes: HostPort[] = [];
  for (const entry of hosts.split(',')) {
    const hostPort = HOST_PORT.exec(entry.trim());
    const port = Number(hostPort?.[3]);
    if (!hostPort || port < 1 || port > 65_535) return { problem: `${kind} nodes must be host:port, separated by commas` };
    nodes.push({ host: (hostPort[1] ?? hostPort[2]) as string, port });
  }
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo) {
    const colon = userinfo.indexOf(':');
    try {
      username = decodeURIComponent(colon === -1 ? userinfo : userinfo.slice(0, colon)) || undefined;
      password = colon === -1 ? undefined : decodeURIComponent(userinfo.slice(colon + 1)) || undefined;
    } catch {
      return { problem: 'has a user or password that is not URL-encoded' };
    }
  }
  const credentials = { ...(username ? { username } : {}), ...(password ? { password } : {}) };
  const tls = scheme === 'rediss';
  if (kind === 'cluster') {
    if (path) return { problem: 'redis-cluster:// takes no path (every node holds database 0)' };
    if (query !== undefined) return { problem: 'redis-cluster:// takes no query (every node has the same user and password)' };
    return { target: { kind: 'cluster', nodes, tls, ...credentials } };
  }
  const sentinelCredentials: { sentinelUsername?: string; sentinelPassword?: string } = {};
  for (const pair of query === undefined ? [] : query.split('&')) {
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals);
    let value: string | undefined;
    try {
      // Percent-encoded as the userinfo is (a + stays a +).
      value = equals === -1 ? undefined : decodeURIComponent(pair.slice(equals + 1));
    } catch {
      value = undefined;
    }
    const known = (SENTINEL_QUERY as readonly string[]).includes(key) && !(key in sentinelCredentials);
    if (!known || value === undefined)
      return {
        problem: "redis-sentinel://'s query takes sentinelUsername and sentinelPassword (each once, URL-encoded), and nothing else",
      };
    if (value !== '') sentinelCredentials[key as (typeof SENTINEL_QUERY)[number]] = value;
  }
  if (!path) return { problem: "redis-sentinel:// needs the primary's name as its path (redis-sentinel://host:port/mymaster)" };
  let name: string;
  try {
    name = decodeURIComponent(path);
  } catch {
    return { problem: "has a primary's name that is not URL-encoded" };
  }
  return { target: { kind: 'sentinel', sentinels: nodes, name, tls, ...credentials, ...sentinelCredentials } };
}

/** ioredis, loaded by the first Redis connection: a gateway without REDIS_URL spares its memory. */
export function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

/** ioredis's states in which Redis is known to be unreachable (until a reconnection): calls fail at once. */
const UNREACHABLE: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/** The longest wait between two attempts to reach Redis again (each gateway on its own schedule). */
export const MAX_RECONNECT_DELAY_MS = 2_000;
const reconnectDelay = (attempt: number): number => Math.min(attempt * 200, MAX_RECONNECT_DELAY_MS);

/** A connection whose calls wait for it within `timeoutMs`; on a cluster, an ioredis Cluster typed as a Redis. */
export function connectRedis(url: string, timeoutMs: number): Redis {
  const parsed = parseRedisUrl(url);
  if ('problem' in parsed) throw new Error(`REDIS_URL ${parsed.problem}`);
  const { target } = parsed;
  const ioredis = loadIoredis();
  const options: RedisOptions = {
    lazyConnect: false,
    // A call made while connecting waits within timeoutMs; a lost connection rejects what was queued: no pile-up.
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(timeoutMs, 1_000),
    retryStrategy: reconnectDelay,
  };
  if (target.kind === 'single') return quiet(new ioredis.Redis(url, options));
  const { username, password } = target;
  const credentials = { ...(username ? { username } : {}), ...(password ? { password } : {}), ...(target.tls ? { tls: {} } : {}) };
  let redis: Redis;
  if (target.kind === 'sentinel') {
    const { sentinelUsername, sentinelPassword } = target;
    redis = new ioredis.Redis({
      ...options,
      ...credentials,
      ...(sentinelUsername ? { sentinelUsername } : {}),
      ...(sentinelPassword ? { sentinelPassword } : {}),
      sentinels: target.sentinels,
      name: target.name,
      sentinelRetryStrategy: reconnectDelay,
      // An old primary come back as a replica answers READONLY: reconnect to what the sentinels name now.
      reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
      ...(target.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    });
    if (sentinelPassword === undefined && password !== undefined) offerPasswordToSentinels(redis, password);
  } else {
    const clusterOptions: ClusterOptions = {
      redisOptions: { ...options, ...credentials },
      // A call waits within its bound while the cluster sorts itself out, then fails.
      enableOfflineQueue: true,
      maxRedirections: 4,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: Math.max(timeoutMs, 1_000),
      // The slots are read again every 5 s as well: a new master elsewhere is found without a redirection.
      slotsRefreshInterval: 5_000,
      clusterRetryStrategy: reconnectDelay,
    };
    redis = new ioredis.Cluster(target.nodes, clusterOptions) as unknown as Redis;
  }
  return quiet(redis);
}

/** Sentinels that ask for a password (NOAUTH) get the URL's; only then, as ioredis warns when one takes none. */
function offerPasswordToSentinels(redis: Redis, password: string): void {
  const asked = (error: Error): void => {
    if (!/sentinel/i.test(error.message) || !/\bNOAUTH\b/.test(error.message)) return;
    // ioredis reads it from the options at each attempt to reach the sentinels.
    redis.options.sentinelPassword = password;
    redis.off('error', asked);
  };
  redis.on('error', asked);
}

/** Redis's answers to credentials it does not take, as servers and sentinels word them. */
const REFUSED = /\b(NOAUTH|WRONGPASS)\b[^.]*\.?|\bERR invalid password\b/;

/** Why each connection cannot connect, when it is a refusal of its credentials (until it is ready again). */
const refusals = new WeakMap<Redis, string>();

/** A refusal of the credentials is kept, to be named in the calls that fail and in /ready. */
function quiet(redis: Redis): Redis {
  const record = (error: Error): void => {
    const refused = REFUSED.exec(error.message)?.[0];
    if (refused === undefined) return;
    refusals.set(
      redis,
      /sentinel/i.test(error.message)
        ? `the sentinels refused the credentials (${refused}): REDIS_URL's sentinelUsername and sentinelPassword (its password when the query has none)`
        : `Redis refused the credentials (${refused}): REDIS_URL's user and password`,
    );
  };
  redis.on('error', record);
  redis.on('node error', record);
  redis.on('ready', () => refusals.delete(redis));
  return redis;
}

const refusalOf = (redis: Redis): string | undefined => (redis.status === 'ready' ? undefined : refusals.get(redis));

/** ioredis's state of the connection, and why it cannot connect when its credentials are refused. */
export function connectionState(redis: Redis): string {
  const refused = refusalOf(redis);
  return refused === undefined ? redis.status : `${redis.status}: ${refused}`;
}

/** A call on `redis` that fails after `timeoutMs`, or at once while Redis is known unreachable. */
export function boundedCall<T>(redis: Redis, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  if (UNREACHABLE.has(redis.status)) return Promise.reject(new Error(`Redis is unreachable (${connectionState(redis)})`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // After what had arrived was read: on a busy loop the timer may come due in the same turn as the answer.
    timer = setTimeout(
      () => setImmediate(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms${whyNot(redis)}`))),
      timeoutMs,
    );
  });
  let pending: Promise<T>;
  try {
    pending = call();
  } catch (error) {
    clearTimeout(timer);
    return Promise.reject(error);
  }
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

/** ` (connecting: Redis refused the credentials …)` while the credentials are refused, else nothing. */
function whyNot(redis: Redis): string {
  return refusals.has(redis) && redis.status !== 'ready' ? ` (${connectionState(redis)})` : '';
}

/** Resolves once `redis` is connected; fails after `waitMs`, naming its state (and a refusal of its credentials). */
function whenReady(redis: Redis, waitMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let refusals = 0;
    const end = (error?: Error): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      redis.off('node error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReady = (): void => end();
    // Refused credentials that a retry did not change (a sentinel's NOAUTH gets the URL's password at the
    // first) will not change before the operator does: said now, not at the end of the wait.
    const onError = (): void => {
      if (refusalOf(redis) !== undefined && ++refusals >= 2) end(new Error(`Redis was not ready (${connectionState(redis)})`));
    };
    const timer = setTimeout(() => end(new Error(`Redis was not ready within ${waitMs} ms (${connectionState(redis)})`)), waitMs);
    redis.on('ready', onReady);
    redis.on('error', onError);
    redis.on('node error', onError);
  });
}

/** Redis's `maxmemory-policy` on each server that holds the data, once connected within `waitMs`. */
export async function evictionPolicies(redis: Redis, waitMs: number): Promise<string[]> {
  await whenReady(redis, waitMs);
  const nodes: Redis[] = redis.isCluster ? (redis as unknown as Cluster).nodes('master') : [redis];
  const infos = await Promise.all(nodes.map((node) => boundedCall(node, waitMs, () => node.info('memory'))));
  return infos.map((info) => /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'unknown');
}

/** Whether `policy` may evict keys that have no expiry (`allkeys-lru`, `allkeys-lfu`, `allkeys-random`). */
export const evictsKeysWithoutExpiry = (policy: string): boolean => policy.startsWith('allkeys-');
