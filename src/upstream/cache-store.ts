// Where cached upstream answers live: this process's memory (an LRU bounded in bytes), or Redis, so
// that several gateways share them. Both hold the same records; the cache (cache.ts) decides what
// goes in and what a record means.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

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
  private marksSwept = 0;
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
    // Removed without an await: two sets of one key in the same tick would otherwise both find it
    // absent, and the first one's bytes would stay counted after the second replaced it.
    this.remove(key);
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
    this.remove(key);
  }

  private remove(key: string): void {
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
    // Marks outlive the keys that made them: sweep the expired ones now and then, so they stay few.
    if (this.marks.size > this.marksSwept * 2 + 1_000) {
      const at = this.now();
      for (const [mark, until] of this.marks) if (until <= at) this.marks.delete(mark);
      this.marksSwept = this.marks.size;
    }
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
 * ioredis, loaded by the first Redis store: a gateway without REDIS_URL never loads it (6–8 MB of
 * resident memory, which counts against the peak RSS under load; BENCHMARKS.md, "Session 4").
 */
function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

/** ioredis's states in which Redis is known to be unreachable (until a reconnection): calls fail at once. */
const UNREACHABLE: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/** How often a gateway checks that Redis still holds the secret it uses (Redis may have lost it). */
const SECRET_RECHECK_MS = 60_000;

/**
 * Redis, with every call bounded by `timeoutMs`: a store that fails or is slow makes the cache miss,
 * never the request fail (cache.ts goes to the upstream and says so in the log). Records expire in
 * Redis at their stale lifetime; memory is Redis's to bound (maxmemory with an LRU policy).
 */
export class RedisCacheStore implements CacheStore {
  private readonly redis: Redis;
  private sharedSecret: Promise<string> | undefined;
  /** The secret last read from Redis: proposed again if Redis lost it, so that key ids stay the same. */
  private knownSecret: string | undefined;
  private secretCheckedAt = 0;

  constructor(
    url: string,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly secretRecheckMs = SECRET_RECHECK_MS,
  ) {
    this.redis = new (loadIoredis().Redis)(url, {
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
    this.redis.on('error', () => undefined); // reported by the calls that fail
    // The Redis found again may have lost its data (restarted without persistence): check the secret.
    this.redis.on('close', () => {
      this.sharedSecret = undefined;
    });
  }

  private bounded<T>(call: () => Promise<T>): Promise<T> {
    if (UNREACHABLE.has(this.redis.status)) return Promise.reject(new Error(`Redis is unreachable (${this.redis.status})`));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
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

  async get(key: string): Promise<CacheRecord | undefined> {
    const text = await this.bounded(() => this.redis.get(PREFIX + key));
    if (text === null) return undefined;
    const record = JSON.parse(text) as CacheRecord;
    // As the memory store: nothing past its stale lifetime by the cache's clock (Redis expires by its own).
    return record.staleUntil > this.now() ? record : undefined;
  }

  async set(key: string, record: CacheRecord): Promise<void> {
    // PX takes an integer: a clock with fractions of a millisecond would make every write an error.
    const ttl = Math.max(1, Math.ceil(record.staleUntil - this.now()));
    await this.bounded(() => this.redis.set(PREFIX + key, JSON.stringify(record), 'PX', ttl));
  }

  async delete(key: string): Promise<void> {
    await this.bounded(() => this.redis.del(PREFIX + key));
  }

  async counter(name: string): Promise<number> {
    return Number((await this.bounded(() => this.redis.get(PREFIX + name))) ?? 0);
  }

  async bump(name: string): Promise<number> {
    return this.bounded(() => this.redis.incr(PREFIX + name));
  }

  async mark(name: string, ttlMs: number): Promise<void> {
    await this.bounded(() => this.redis.set(PREFIX + name, '1', 'PX', Math.max(1, Math.ceil(ttlMs))));
  }

  async marked(name: string): Promise<boolean> {
    return (await this.bounded(() => this.redis.exists(PREFIX + name))) === 1;
  }

  /**
   * The first gateway on the store sets the secret; every other one reads it. One round trip (SET NX
   * and GET in a transaction), so one bounded wait. Checked again after a lost connection and every
   * `secretRecheckMs` (a minute): a Redis that lost it gets this gateway's again (the key ids stay), and a
   * gateway whose secret was replaced takes the new one (the gateways share entries again).
   */
  secret(): Promise<string> {
    if (this.sharedSecret !== undefined && Date.now() - this.secretCheckedAt < this.secretRecheckMs) return this.sharedSecret;
    this.secretCheckedAt = Date.now();
    const key = `${PREFIX}secret`;
    const proposed = this.knownSecret ?? randomBytes(32).toString('hex');
    const check = this.bounded(() => this.redis.multi().set(key, proposed, 'NX').get(key).exec()).then((replies) => {
      const [setReply, getReply] = replies ?? [];
      const error = setReply?.[0] ?? getReply?.[0];
      if (error) throw error;
      const secret = getReply?.[1];
      if (typeof secret !== 'string' || secret === '') throw new Error('Redis lost the cache secret');
      this.knownSecret = secret;
      return secret;
    });
    this.sharedSecret = check;
    check.catch(() => {
      if (this.sharedSecret === check) this.sharedSecret = undefined; // try again on the next request
    });
    return check;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
