// A connection to Redis as the gateway uses one (the read cache's store, the live pollers' share):
// every call bounded in time, none piling up behind an outage, and ioredis loaded only by a gateway
// that has REDIS_URL.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

/** Where everything of the gateway's lives in Redis. */
export const PREFIX = 'agw:';

/**
 * ioredis, loaded by the first Redis connection: a gateway without REDIS_URL never loads it (6–8 MB of
 * resident memory, which counts against the peak RSS under load; docs/performance.md#memory).
 */
export function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

/** ioredis's states in which Redis is known to be unreachable (until a reconnection): calls fail at once. */
const UNREACHABLE: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/** A connection whose calls wait for it within `timeoutMs` and fail at once while Redis is known unreachable. */
export function connectRedis(url: string, timeoutMs: number): Redis {
  const redis = new (loadIoredis().Redis)(url, {
    lazyConnect: false,
    // A call made while the connection is being made (at start-up, or a reconnection under way)
    // waits for it, within timeoutMs; while Redis is known unreachable, calls fail at once
    // (bounded). Every lost connection or failed attempt rejects what was queued (maxRetriesPerRequest
    // 0), so nothing piles up behind an outage.
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(timeoutMs, 1_000),
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  redis.on('error', () => undefined); // reported by the calls that fail
  return redis;
}

/** A call on `redis` that fails after `timeoutMs`, or at once while Redis is known unreachable. */
export function boundedCall<T>(redis: Redis, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  if (UNREACHABLE.has(redis.status)) return Promise.reject(new Error(`Redis is unreachable (${redis.status})`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Once what had arrived was read: a busy event loop runs a timer that came due before the answer beside it.
    timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`))), timeoutMs);
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
