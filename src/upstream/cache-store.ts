// Where cached upstream answers live: this process's memory (an LRU bounded in bytes), or Redis, so
// that several gateways share them. Both hold the same records; the cache (cache.ts) decides what
// goes in and what a record means.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** A decoded upstream answer and its lifetimes (epoch milliseconds). */
export interface CacheRecord {
  value: unknown;
  /** Until then the record answers as it is. */
  freshUntil: number;
  /** Until then it may answer when the upstream cannot (flagged stale). */
  staleUntil: number;
}

export interface CacheStore {
  get(key: string): Promise<CacheRecord | undefined>;
  set(key: string, record: CacheRecord): Promise<void>;
  delete(key: string): Promise<void>;
  /** A counter (0 when unset); `bump` increments it: generations that make old records unreachable. */
  counter(name: string): Promise<number>;
  bump(name: string): Promise<number>;
  /** Marks a name for `ttlMs`; `marked` says whether it still is. */
  mark(name: string, ttlMs: number): Promise<void>;
  marked(name: string): Promise<boolean>;
  /** The secret that keys the hash of API keys: shared by every gateway on the store. */
  secret(): Promise<string>;
  close(): Promise<void>;
}

/** An LRU by bytes (each record counted as its JSON), expiring records past their stale lifetime. */
export class MemoryCacheStore implements CacheStore {
  private readonly records = new Map<string, { record: CacheRecord; bytes: number }>();
  private readonly counters = new Map<string, number>();
  private readonly marks = new Map<string, number>();
  private readonly processSecret = randomBytes(32).toString('hex');
  private bytes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.records.size, bytes: this.bytes };
  }

  async get(key: string): Promise<CacheRecord | undefined> {
    const held = this.records.get(key);
    if (held === undefined) return undefined;
    this.records.delete(key);
    if (held.record.staleUntil <= this.now()) {
      this.bytes -= held.bytes;
      return undefined;
    }
    this.records.set(key, held); // most recently used last
    return held.record;
  }

  async set(key: string, record: CacheRecord): Promise<void> {
    await this.delete(key);
    const bytes = key.length + JSON.stringify(record.value).length + 32;
    if (bytes > this.maxBytes) return;
    this.records.set(key, { record, bytes });
    this.bytes += bytes;
    for (const [oldest, held] of this.records) {
      if (this.bytes <= this.maxBytes) break;
      this.records.delete(oldest);
      this.bytes -= held.bytes;
    }
  }

  async delete(key: string): Promise<void> {
    const held = this.records.get(key);
    if (held === undefined) return;
    this.records.delete(key);
    this.bytes -= held.bytes;
  }

  async counter(name: string): Promise<number> {
    return this.counters.get(name) ?? 0;
  }

  async bump(name: string): Promise<number> {
    const next = (this.counters.get(name) ?? 0) + 1;
    this.counters.set(name, next);
    return next;
  }

  async mark(name: string, ttlMs: number): Promise<void> {
    this.marks.set(name, this.now() + ttlMs);
  }

  async marked(name: string): Promise<boolean> {
    const until = this.marks.get(name);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.marks.delete(name);
    return false;
  }

  async secret(): Promise<string> {
    return this.processSecret;
  }

  async close(): Promise<void> {
    this.records.clear();
    this.bytes = 0;
  }
}

const PREFIX = 'agw:';

/**
 * Redis, with every call bounded by `timeoutMs`: a store that fails or is slow makes the cache miss,
 * never the request fail (cache.ts goes to the upstream and says so in the log). Records expire in
 * Redis at their stale lifetime; memory is Redis's to bound (maxmemory with an LRU policy).
 */
export class RedisCacheStore implements CacheStore {
  private readonly redis: Redis;
  private sharedSecret: Promise<string> | undefined;

  constructor(
    url: string,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.redis = new Redis(url, {
      lazyConnect: false,
      // Fail fast while disconnected instead of queueing commands behind a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(timeoutMs, 1_000),
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.redis.on('error', () => undefined); // reported by the calls that fail
  }

  private bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }

  async get(key: string): Promise<CacheRecord | undefined> {
    const text = await this.bounded(this.redis.get(PREFIX + key));
    return text === null ? undefined : (JSON.parse(text) as CacheRecord);
  }

  async set(key: string, record: CacheRecord): Promise<void> {
    const ttl = Math.max(1, record.staleUntil - this.now());
    await this.bounded(this.redis.set(PREFIX + key, JSON.stringify(record), 'PX', ttl));
  }

  async delete(key: string): Promise<void> {
    await this.bounded(this.redis.del(PREFIX + key));
  }

  async counter(name: string): Promise<number> {
    return Number((await this.bounded(this.redis.get(PREFIX + name))) ?? 0);
  }

  async bump(name: string): Promise<number> {
    return this.bounded(this.redis.incr(PREFIX + name));
  }

  async mark(name: string, ttlMs: number): Promise<void> {
    await this.bounded(this.redis.set(PREFIX + name, '1', 'PX', Math.max(1, ttlMs)));
  }

  async marked(name: string): Promise<boolean> {
    return (await this.bounded(this.redis.exists(PREFIX + name))) === 1;
  }

  /** The first gateway on the store sets the secret; every other one reads it. */
  secret(): Promise<string> {
    this.sharedSecret ??= (async () => {
      const key = `${PREFIX}secret`;
      await this.bounded(this.redis.set(key, randomBytes(32).toString('hex'), 'NX'));
      const secret = await this.bounded(this.redis.get(key));
      if (secret === null) throw new Error('Redis lost the cache secret');
      return secret;
    })().catch((error: unknown) => {
      this.sharedSecret = undefined; // try again on the next request
      throw error;
    });
    return this.sharedSecret;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
