// Where cached upstream answers live: this process's memory (an LRU bounded in bytes), or Redis, so
// that several gateways share them. Both hold the same records; the cache (cache.ts) decides what
// goes in and what a record means.
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { integer, seconds } from '../settings.js';
import { PREFIX, boundedCall, connectRedis, connectionState, evictionPolicies } from './redis-connection.js';

/** A decoded upstream answer and its lifetimes (epoch milliseconds). */
export interface CacheRecord {
  value: unknown;
  /** Until then the record answers as it is. */
  freshUntil: number;
  /** Until then it may answer when the upstream cannot (flagged stale). */
  staleUntil: number;
}

/**
 * Counters (by name) and the values they had when the read behind a record began. A write or a
 * revocation moves one of them on; a record read before that must not be stored after it.
 */
export type CounterGuard = Readonly<Record<string, number>>;

export interface CacheStore {
  get(key: string): Promise<CacheRecord | undefined>;
  /**
   * Stores the record, unless a counter of `guard` no longer has its value: the check and the write
   * are one step in the store, so no write through any gateway falls between them. Says whether it stored.
   */
  set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * A counter (0 when unset); `bump` increments it: generations that make old records unreachable. A
   * counter lives at least `lifetimeMs` after its last bump and as long as any record stored under its
   * guard (then it is unset again: 0, with nothing left that an older value could reach).
   */
  counter(name: string): Promise<number>;
  bump(name: string, lifetimeMs: number): Promise<number>;
  /** Marks a name for `ttlMs`; `marked` says whether it still is. */
  mark(name: string, ttlMs: number): Promise<void>;
  marked(name: string): Promise<boolean>;
  /**
   * The names that start with `prefix` (without the store's own prefix), a batch at a time: every one
   * that was there from the start to the end of the walk is given at least once.
   */
  namesStartingWith(prefix: string): AsyncIterable<string[]>;
  /** The secret that keys the hash of API keys: shared by every gateway on the store. */
  secret(): Promise<string>;
  /** A record, counters and marks at once (one round trip in Redis): what `get`, `counter` and `marked` say of each. */
  look(key: string, counters: readonly string[], marks: readonly string[]): Promise<StoreLook>;
  /** Told when the connection to a store over the network is lost and when it is ready again (none for memory). */
  onConnection?(listener: (event: 'lost' | 'ready') => void): void;
  close(): Promise<void>;
}

/** What `look` found: the record (if any), each counter's value and each mark's, in the order asked. */
export interface StoreLook {
  record: CacheRecord | undefined;
  counters: number[];
  marks: boolean[];
}

/** Characters a one-byte V8 string cannot hold: a text with any of them takes two bytes a character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is Latin-1 from its first character, U+0000.
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;
/** A record's own objects, its entry in the map and its key's header. */
const RECORD_OVERHEAD_BYTES = 200;

/** What a record held as `text` under `key` costs in V8's heap, in bytes. */
function heldBytes(key: string, text: string): number {
  const perCharacter = BEYOND_LATIN1.test(text) ? 2 : 1;
  return key.length + perCharacter * text.length + RECORD_OVERHEAD_BYTES;
}

interface HeldRecord {
  /** The value as JSON: one string, not the thousands of objects a decoded page is made of. */
  text: string;
  freshUntil: number;
  staleUntil: number;
  bytes: number;
}

/**
 * An LRU bounded by what its records cost in V8's heap, expiring records past their stale lifetime.
 * Records are held as JSON text and parsed again on each hit: a decoded page is hundreds of small
 * objects, which cost 1.4 to 1.7 times their JSON in the heap, hang on through the young generation
 * and are traced by every full collection; its text is one string, the size of its JSON (two bytes
 * a character when it has characters beyond Latin-1), of which a collection sees one object. A hit
 * pays one JSON.parse (1 to 5 µs per KB, by how many values it holds: a few µs for a dashboard's
 * pages) and gets a value of its own, as Redis's hits do. Measured in a gateway: 64 MiB of
 * dashboards added 90 MB of RSS as text against 131 MB as decoded objects counted by their JSON;
 * full collections of a full cache took a tenth as long.
 */
export class MemoryCacheStore implements CacheStore {
  private readonly records = new Map<string, HeldRecord>();
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
    if (held.staleUntil <= this.now()) {
      this.bytes -= held.bytes;
      return undefined;
    }
    this.records.set(key, held); // most recently used last
    return { value: JSON.parse(held.text) as unknown, freshUntil: held.freshUntil, staleUntil: held.staleUntil };
  }

  async set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean> {
    // Checked and done without an await, so nothing can fall between (a bump, or another set of the
    // key whose bytes would then be counted twice).
    if (guard !== undefined && !this.holds(guard)) return false;
    this.remove(key);
    const text = JSON.stringify(record.value) as string | undefined;
    if (text === undefined) return false;
    const bytes = heldBytes(key, text);
    if (bytes > this.maxBytes) return false;
    this.records.set(key, { text, freshUntil: record.freshUntil, staleUntil: record.staleUntil, bytes });
    this.bytes += bytes;
    for (const [oldest, held] of this.records) {
      if (this.bytes <= this.maxBytes) break;
      this.records.delete(oldest);
      this.bytes -= held.bytes;
    }
    return true;
  }

  /** Whether every counter of the guard still has its value. */
  private holds(guard: CounterGuard): boolean {
    for (const name in guard) if ((this.counters.get(name) ?? 0) !== guard[name]) return false;
    return true;
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

  /** Counters live as long as this process: it keeps the counters of the keys the install accepted. */
  async bump(name: string, _lifetimeMs: number): Promise<number> {
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

  async *namesStartingWith(prefix: string): AsyncIterable<string[]> {
    const names = new Set<string>();
    for (const map of [this.records, this.counters, this.marks])
      for (const name of map.keys()) if (name.startsWith(prefix)) names.add(name);
    yield [...names];
  }

  async secret(): Promise<string> {
    return this.processSecret;
  }

  async look(key: string, counters: readonly string[], marks: readonly string[]): Promise<StoreLook> {
    const [record, values, marked] = await Promise.all([
      this.get(key),
      Promise.all(counters.map((name) => this.counter(name))),
      Promise.all(marks.map((name) => this.marked(name))),
    ]);
    return { record, counters: values, marks: marked };
  }

  async close(): Promise<void> {
    this.records.clear();
    this.bytes = 0;
  }
}

/**
 * SET of a record, unless a counter moved since its read began (CacheStore.set's guard), in one step:
 * Redis runs a script alone, so no INCR by another gateway falls between the check and the write.
 * Each counter that is set then lives at least as long as the record: a counter that expired before a
 * record stored under it would start again from 0 and could make an old record reachable again.
 * KEYS: the record, then the counters; ARGV: the record's JSON, its expiry (ms), the counters' values.
 */
const SET_UNLESS_MOVED = `
for i = 2, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') ~= tonumber(ARGV[i + 1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left >= 0 and left < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
return 1`;

/**
 * INCR of a counter, which then lives at least ARGV[1] ms (as long as any record can: CacheStore.bump).
 * Taken even when Redis is full (maxmemory with `noeviction` refuses INCR): a counter that a write or a
 * revocation must move on is a few bytes, and an entry from before it must not be served after it.
 */
const BUMP_BODY = `
local value = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return value`;
/**
 * Script flags are Redis 7's: a Redis 6 cannot compile BUMP, and gets the script without them (refused
 * while it is full: the cache then owes the drop until it lands, cache-unsettled.ts).
 */
const BUMP = `#!lua flags=allow-oom${BUMP_BODY}`;

/**
 * Keeps a persisted document within a bound shared by every gateway on the store, in one step: the
 * document under its own key with a lifetime, an index of hashes by last registration (the oldest out
 * first) and their sizes, and the bytes of all. A document that expired stays counted until the
 * index lets it go: the bound errs on the safe side.
 * KEYS: the document, the index, the sizes, the byte count; ARGV: hash, document, lifetime (ms), now,
 * most documents, most bytes, the prefix of documents' keys.
 */
const KEEP_DOCUMENT = `
local size = string.len(ARGV[2])
if size > tonumber(ARGV[6]) or tonumber(ARGV[5]) < 1 then return 0 end
local before = redis.call('HGET', KEYS[3], ARGV[1])
if before then redis.call('DECRBY', KEYS[4], before) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], size)
local bytes = redis.call('INCRBY', KEYS[4], size)
while redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[5]) or bytes > tonumber(ARGV[6]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local gone = redis.call('HGET', KEYS[3], oldest[1]) or '0'
  redis.call('HDEL', KEYS[3], oldest[1])
  redis.call('DEL', ARGV[7] .. oldest[1])
  bytes = redis.call('DECRBY', KEYS[4], gone)
end
return 1`;

/** ioredis with the scripts above as commands (defineCommand adds them at run time; EVALSHA, loaded once). */
interface RedisWithScripts extends Redis {
  setUnlessMoved(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  keepDocument(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  bumpCounter(numberOfKeys: number, key: string, lifetimeMs: number): Promise<number>;
  bumpCounterWithoutFlags(numberOfKeys: number, key: string, lifetimeMs: number): Promise<number>;
}

/**
 * Where persisted documents live in Redis: apart from the cache's records, with their own bound. One
 * hash tag for all of them: the script that keeps one evicts others, so on a cluster they share a slot.
 */
const DOCUMENTS = `${PREFIX}{apq}:`;

/** The stores: the memory store's bound, the wait for Redis, and how long Redis keeps a persisted query. */
export const CACHE_STORE_SETTINGS = {
  maxBytes: integer('CACHE_MAX_BYTES', {
    fallback: 64 * 1024 * 1024,
    min: 0,
    max: 16 * 1024 ** 3,
    unit: 'bytes',
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

/** The bound of the persisted documents that all gateways on one Redis keep together. */
export interface DocumentBound {
  maxEntries: number;
  maxBytes: number;
  /** How long a document is kept after its last registration or use. */
  lifetimeMs: number;
}

/** How often a cluster's slots are read while one of its nodes is lost (a master dead, its replica soon its successor). */
const SLOTS_READ_WHILE_LOST_MS = 200;

/** How often a gateway checks that Redis still holds the secret it uses (Redis may have lost it). */
const SECRET_RECHECK_MS = 60_000;

/**
 * Redis, with every call bounded by `timeoutMs`: a store that fails or is slow makes the cache miss,
 * never the request fail (cache.ts goes to the upstream and says so in the log). Records expire in
 * Redis at their stale lifetime; memory is Redis's to bound (maxmemory with an LRU policy).
 */
export class RedisCacheStore implements CacheStore {
  private readonly redis: RedisWithScripts;
  private sharedSecret: Promise<string> | undefined;
  /** The secret last read from Redis: proposed again if Redis lost it, so that key ids stay the same. */
  private knownSecret: string | undefined;
  private secretCheckedAt = 0;
  /** Set when Redis cannot compile BUMP (before Redis 7): counters are moved by the script without its flags. */
  private withoutFlags = false;
  /** Reads a cluster's slots again while one of its nodes is lost. */
  private slotsReading: NodeJS.Timeout | undefined;
  /** Told when the connection is lost and ready again (onConnection). */
  private readonly connectionListeners: ((event: 'lost' | 'ready') => void)[] = [];

  constructor(
    url: string,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly secretRecheckMs = SECRET_RECHECK_MS,
  ) {
    const redis = connectRedis(url, timeoutMs);
    redis.defineCommand('setUnlessMoved', { lua: SET_UNLESS_MOVED });
    redis.defineCommand('keepDocument', { lua: KEEP_DOCUMENT });
    redis.defineCommand('bumpCounter', { lua: BUMP });
    redis.defineCommand('bumpCounterWithoutFlags', { lua: BUMP_BODY });
    this.redis = redis as RedisWithScripts;
    if (redis.isCluster) this.watchNodes();
    // The Redis found again may have lost its data (restarted without persistence): check the secret.
    this.redis.on('close', () => {
      this.sharedSecret = undefined;
    });
  }

  /** The secret last read from Redis, if one was (without waiting for Redis): the ETags' (use-http-caching.ts). */
  get known(): string | undefined {
    return this.knownSecret;
  }

  onConnection(listener: (event: 'lost' | 'ready') => void): void {
    this.redis.on('close', () => listener('lost'));
    this.redis.on('ready', () => listener('ready'));
    this.connectionListeners.push(listener);
  }

  /**
   * On a cluster, the connection as a whole stays up when a master dies. The connection to one node
   * closed while the cluster still counts on it is a connection lost; that node answering again, or
   * dropped by the cluster (its replica took its slots: the slots read again no longer name it), one
   * ready again. A write's drop sent meanwhile, through this gateway or another, reached no master, and
   * lands when its gateway finds the new one: until then what the new master holds is from before the
   * write. (Nodes the cluster closes itself, once it learnt it does not need them, are out of it by then.)
   * Registered before any node is added: the cluster adds them once it is connected.
   */
  private watchNodes(): void {
    const cluster = this.redis as unknown as Cluster;
    const nameOf = (node: Redis): string => `${node.options.host}:${node.options.port}`;
    /** The nodes (host:port) whose connection was lost, neither back nor dropped by the cluster yet. */
    const lost = new Set<string>();
    const tell = (event: 'lost' | 'ready'): void => {
      for (const listener of this.connectionListeners) listener(event);
    };
    // Lost again just before: a connection lost elsewhere and found meanwhile must not have used it up.
    const found = (name: string): void => {
      if (!lost.delete(name)) return;
      tell('lost');
      tell('ready');
      if (lost.size === 0) clearInterval(this.slotsReading);
    };
    cluster.on('+node', (node: Redis) => {
      node.on('close', () => {
        if (!cluster.nodes('all').includes(node)) return;
        lost.add(nameOf(node));
        tell('lost');
        // The slots read again often while a node is lost (the gateway's reads go past the store meanwhile,
        // and send none that would tell): the new master is known as soon as the cluster has one.
        clearInterval(this.slotsReading);
        this.slotsReading = setInterval(() => cluster.refreshSlotsCache(), SLOTS_READ_WHILE_LOST_MS);
        this.slotsReading.unref();
      });
      node.on('ready', () => found(nameOf(node)));
    });
    cluster.on('refresh', () => {
      const known = new Set(cluster.nodes('all').map(nameOf));
      for (const name of lost) if (!known.has(name)) found(name);
    });
  }

  /** ioredis's state of the connection (`ready` when connected), reported by /ready; with why, when its credentials are refused. */
  get connection(): string {
    return connectionState(this.redis);
  }

  /** Redis's maxmemory-policy on each server holding the store, once connected within `waitMs` (checked at start). */
  evictionPolicies(waitMs: number): Promise<string[]> {
    return evictionPolicies(this.redis, waitMs);
  }

  private bounded<T>(call: () => Promise<T>): Promise<T> {
    return boundedCall(this.redis, this.timeoutMs, call);
  }

  async get(key: string): Promise<CacheRecord | undefined> {
    const text = await this.bounded(() => this.redis.get(PREFIX + key));
    if (text === null) return undefined;
    const record = JSON.parse(text) as CacheRecord;
    // As the memory store: nothing past its stale lifetime by the cache's clock (Redis expires by its own).
    return record.staleUntil > this.now() ? record : undefined;
  }

  async set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean> {
    // PX takes an integer: a clock with fractions of a millisecond would make every write an error.
    const ttl = Math.max(1, Math.ceil(record.staleUntil - this.now()));
    const text = JSON.stringify(record);
    if (guard === undefined) {
      await this.bounded(() => this.redis.set(PREFIX + key, text, 'PX', ttl));
      return true;
    }
    const names = Object.keys(guard);
    const counters = names.map((name) => PREFIX + name);
    const expected = names.map((name) => guard[name] as number);
    const stored = await this.bounded(() => this.redis.setUnlessMoved(1 + names.length, PREFIX + key, ...counters, text, ttl, ...expected));
    return stored === 1;
  }

  async delete(key: string): Promise<void> {
    await this.bounded(() => this.redis.del(PREFIX + key));
  }

  /** One MGET: the record, the counters, and the marks (a mark's value is `1` while it lives). */
  async look(key: string, counters: readonly string[], marks: readonly string[]): Promise<StoreLook> {
    const names = [key, ...counters, ...marks].map((name) => PREFIX + name);
    const [text, ...rest] = await this.bounded(() => this.redis.mget(names));
    let record: CacheRecord | undefined;
    if (typeof text === 'string') {
      const parsed = JSON.parse(text) as CacheRecord;
      if (parsed.staleUntil > this.now()) record = parsed;
    }
    return {
      record,
      counters: rest.slice(0, counters.length).map((value) => Number(value ?? 0)),
      marks: rest.slice(counters.length).map((value) => value !== null && value !== undefined),
    };
  }

  /** A persisted document by its hash; a document found lives `lifetimeMs` longer and is the newest. */
  async document(hash: string, bound: DocumentBound): Promise<string | undefined> {
    const document = await this.bounded(() => this.redis.get(DOCUMENTS + hash));
    if (document === null) return undefined;
    // Not waited for: the request has its document; a failure only makes it older than it is.
    void this.redis
      .multi()
      .pexpire(DOCUMENTS + hash, bound.lifetimeMs)
      .zadd(`${DOCUMENTS}index`, 'XX', Date.now(), hash)
      .exec()
      .catch(() => undefined);
    return document;
  }

  /** Keeps a persisted document, the oldest ones out past the bound (shared by every gateway on this Redis). */
  async keepDocument(hash: string, document: string, bound: DocumentBound): Promise<boolean> {
    const kept = await this.bounded(() =>
      this.redis.keepDocument(
        4,
        DOCUMENTS + hash,
        `${DOCUMENTS}index`,
        `${DOCUMENTS}sizes`,
        `${DOCUMENTS}bytes`,
        hash,
        document,
        Math.max(1, Math.ceil(bound.lifetimeMs)),
        Date.now(),
        bound.maxEntries,
        bound.maxBytes,
        DOCUMENTS,
      ),
    );
    return kept === 1;
  }

  /** SCAN on each master of a cluster (each holds its own slots), or on the one Redis; each step bounded. */
  async *namesStartingWith(prefix: string): AsyncIterable<string[]> {
    const pattern = `${PREFIX + prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    const nodes: Redis[] = this.redis.isCluster ? (this.redis as unknown as Cluster).nodes('master') : [this.redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, names] = await boundedCall(node, this.timeoutMs, () => node.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000));
        cursor = next;
        yield names.map((name) => name.slice(PREFIX.length));
      } while (cursor !== '0');
    }
  }

  async counter(name: string): Promise<number> {
    return Number((await this.bounded(() => this.redis.get(PREFIX + name))) ?? 0);
  }

  async bump(name: string, lifetimeMs: number): Promise<number> {
    const lifetime = Math.max(1, Math.ceil(lifetimeMs));
    if (this.withoutFlags) return this.bounded(() => this.redis.bumpCounterWithoutFlags(1, PREFIX + name, lifetime));
    try {
      return await this.bounded(() => this.redis.bumpCounter(1, PREFIX + name, lifetime));
    } catch (error) {
      if (!(error instanceof Error) || !/Error compiling script/i.test(error.message)) throw error;
      this.withoutFlags = true; // a Redis before 7
      return this.bounded(() => this.redis.bumpCounterWithoutFlags(1, PREFIX + name, lifetime));
    }
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
    clearInterval(this.slotsReading);
    this.redis.disconnect();
  }
}
