// The store that cached answers live in: this process's memory (memory-store.ts) or Redis, shared by
// gateways (redis-store.ts). The read cache (read-cache.ts) decides what goes in and what a record means.
import { HEAP_BYTES, integer, seconds } from '../settings.js';

/** A decoded upstream answer and its lifetimes (epoch milliseconds). */
export interface CacheRecord {
  value: unknown;
  /** Bytes beside the value, never JSON: a stored answer's body. Readers change neither (held as they are). */
  bytes?: Uint8Array;
  /** Until then the record answers as it is. */
  freshUntil: number;
  /** Until then it may answer when the upstream cannot (flagged stale). */
  staleUntil: number;
}

/** Counters (by name) and their values when the read behind a record began: a write or a revocation moves one. */
export type CounterGuard = Readonly<Record<string, number>>;

export interface CacheStore {
  get(key: string): Promise<CacheRecord | undefined>;
  /** Stores the record unless a counter of `guard` moved, checked in the same step; says whether it stored. */
  set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** A counter (0 when unset); it lives `lifetimeMs` after its last bump, and as long as a record under its guard. */
  counter(name: string): Promise<number>;
  bump(name: string, lifetimeMs: number): Promise<number>;
  /** Marks a name for `ttlMs`; `marked` says whether it still is. */
  mark(name: string, ttlMs: number): Promise<void>;
  marked(name: string): Promise<boolean>;
  /** The names that start with `prefix`, a batch at a time: each there all through the walk at least once. */
  namesStartingWith(prefix: string): AsyncIterable<string[]>;
  /** The secret that keys the hash of API keys: shared by every gateway on the store. */
  secret(): Promise<string>;
  /** What `get`, `counter` and `marked` say, at once (one round trip in Redis). */
  look(key: string, counters: readonly string[], marks: readonly string[]): Promise<StoreLook>;
  /** The secret when the store has it at hand, without a call or a wait (undefined: ask `secret`). */
  secretNow?(): string | undefined;
  /** A look answered without a promise (memory): a stored answer is found and sent in one go. */
  lookNow?(key: string, counters: readonly string[], marks: readonly string[]): StoreLook;
  /** Told when the connection to a store over the network is lost and ready again. */
  onConnection?(listener: (event: 'lost' | 'ready') => void): void;
  close(): Promise<void>;
}

/** What `look` found, in the order asked. */
export interface StoreLook {
  record: CacheRecord | undefined;
  counters: number[];
  marks: boolean[];
}

/** The stores: the memory store's bound, the wait for Redis, and how long Redis keeps a persisted query. */
export const CACHE_STORE_SETTINGS = {
  maxBytes: integer('CACHE_MAX_BYTES', {
    ...HEAP_BYTES,
    fallback: 64 * 1024 * 1024,
    doc: "what the in-memory cache's records may take in V8's heap",
  }),
  storeTimeoutMs: integer('CACHE_STORE_TIMEOUT_MS', {
    fallback: 100,
    min: 1,
    max: 60_000,
    unit: 'ms',
    doc: "longest wait for the store before a request's reads go to the install",
  }),
  redisTtlMs: seconds('APQ_REDIS_TTL_S', {
    fallbackMs: 86_400_000,
    min: 60,
    max: 604_800,
    doc: 'with REDIS_URL: how long Redis keeps a persisted query after its last use',
  }),
};
