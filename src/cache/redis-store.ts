// The Redis store: cached answers shared by every gateway on one Redis, the scripts that check a key's
// counters and write in one step, the secret that keys the hash of API keys, and the persisted documents.
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { PREFIX, boundedCall, connectRedis, connectionState, evictionPolicies } from './redis-connection.js';
import type { CacheRecord, CacheStore, CounterGuard, StoreLook } from './store.js';

/**
 * SET of a record unless a counter of its guard moved, in one step. Each counter then lives as long as the record:
 * one expired first would start from 0 and reach it again. KEYS: the record, the counters; ARGV: the record
 * as held, its expiry (ms), the counters' values.
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

/** INCR of a counter that then lives ARGV[1] ms at least; taken even by a full Redis: a write's drop must land. */
const BUMP_BODY = `
local value = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return value`;
/** Script flags are Redis 7's: a Redis 6 gets the script without them (refused while full: unsettled.ts). */
const BUMP = `#!lua flags=allow-oom${BUMP_BODY}`;

/** One hash tag for all documents: the script that keeps one evicts others, so on a cluster they share a slot. */
const DOCUMENTS = `${PREFIX}{apq}:`;

/** The bound of the persisted documents that all gateways on one Redis keep together. */
interface DocumentBound {
  maxEntries: number;
  maxBytes: number;
  lifetimeMs: number;
}

/**
 * Keeps a persisted document within the bound, in one step, with an index of hashes by last registration
 * (the oldest out first), their sizes and the bytes of all. KEYS: the document, the index, the sizes, the byte
 * count; ARGV: hash, document, lifetime (ms), now, most documents, most bytes, the prefix of documents' keys.
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

/** ioredis with the scripts above as commands (defineCommand: EVALSHA, loaded once). */
interface RedisWithScripts extends Redis {
  keepDocument(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  setUnlessMoved(numberOfKeys: number, ...keysAndArguments: (string | number | Buffer)[]): Promise<number>;
  bumpCounter(numberOfKeys: number, key: string, lifetimeMs: number): Promise<number>;
  bumpCounterWithoutFlags(numberOfKeys: number, key: string, lifetimeMs: number): Promise<number>;
}

/** Where a record's JSON ends and its bytes begin: JSON text never holds a raw line feed. */
const LINE_FEED = 0x0a;

/** A record as Redis holds it: its JSON, then its bytes (if any) after a line feed, so a hit never decodes them. */
function encodeRecord(record: CacheRecord): string | Buffer {
  const { bytes, ...rest } = record;
  const text = JSON.stringify(rest);
  return bytes === undefined ? text : Buffer.concat([Buffer.from(text), Uint8Array.of(LINE_FEED), bytes]);
}

function decodeRecord(held: Buffer): CacheRecord {
  const end = held.indexOf(LINE_FEED);
  if (end === -1) return JSON.parse(held.toString()) as CacheRecord;
  const record = JSON.parse(held.toString('utf8', 0, end)) as CacheRecord;
  record.bytes = held.subarray(end + 1);
  return record;
}

/** How often a cluster's slots are read while one of its nodes is lost (its replica soon its successor). */
const SLOTS_READ_WHILE_LOST_MS = 200;

/** How often a gateway checks that Redis still holds the secret it uses (Redis may have lost it). */
const SECRET_RECHECK_MS = 60_000;

/** Every call bounded by `timeoutMs`; records expire at their stale lifetime; memory is Redis's to bound. */
export class RedisCacheStore implements CacheStore {
  private readonly redis: RedisWithScripts;
  private sharedSecret: Promise<string> | undefined;
  /** The secret last read from Redis: proposed again if Redis lost it, so that key ids stay the same. */
  private knownSecret: string | undefined;
  private secretCheckedAt = 0;
  /** The last check of the secret that answered, and its answer. */
  private settledSecret: { check: Promise<string>; secret: string } | undefined;
  /** Set when Redis cannot compile BUMP (before Redis 7). */
  private withoutFlags = false;
  private slotsReading: NodeJS.Timeout | undefined;
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

  /** The secret last read from Redis, if one was, without waiting: the ETags' (http/answer.ts). */
  get known(): string | undefined {
    return this.knownSecret;
  }

  onConnection(listener: (event: 'lost' | 'ready') => void): void {
    this.redis.on('close', () => listener('lost'));
    this.redis.on('ready', () => listener('ready'));
    this.connectionListeners.push(listener);
  }

  /**
   * A cluster stays up when a master dies: a node closed while the cluster counts on it is a connection lost,
   * back or out of the slots one ready again (a drop sent meanwhile reached no master).
   */
  private watchNodes(): void {
    const cluster = this.redis as unknown as Cluster;
    const nameOf = (node: Redis): string => `${node.options.host}:${node.options.port}`;
    /** The nodes whose connection was lost, neither back nor dropped by the cluster yet. */
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
        // Slots read often while a node is lost (reads go past the store and send none that would tell).
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

  /** ioredis's state of the connection, reported by /ready. */
  get connection(): string {
    return connectionState(this.redis);
  }

  /** Redis's maxmemory-policy on each server holding the store (checked at start). */
  evictionPolicies(waitMs: number): Promise<string[]> {
    return evictionPolicies(this.redis, waitMs);
  }

  private bounded<T>(call: () => Promise<T>): Promise<T> {
    return boundedCall(this.redis, this.timeoutMs, call);
  }

  async get(key: string): Promise<CacheRecord | undefined> {
    return this.fresh(await this.bounded(() => this.redis.getBuffer(PREFIX + key)));
  }

  /** A record as Redis holds it, decoded; undefined when there is none or past its stale lifetime. */
  private fresh(held: Buffer | null | undefined): CacheRecord | undefined {
    if (held === null || held === undefined) return undefined;
    const record = decodeRecord(held);
    // As the memory store: nothing past its stale lifetime by the cache's clock (Redis expires by its own).
    return record.staleUntil > this.now() ? record : undefined;
  }

  async set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean> {
    // PX takes an integer: a clock with fractions of a millisecond would make every write an error.
    const ttl = Math.max(1, Math.ceil(record.staleUntil - this.now()));
    const text = encodeRecord(record);
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
    const [held, ...rest] = await this.bounded(() => this.redis.mgetBuffer(names));
    return {
      record: this.fresh(held),
      counters: rest.slice(0, counters.length).map((value) => (value === null || value === undefined ? 0 : Number(value.toString()))),
      marks: rest.slice(counters.length).map((value) => value !== null && value !== undefined),
    };
  }

  /** A persisted document by its hash; one found lives `lifetimeMs` longer and is the newest. */
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

  /** Keeps a persisted document, the oldest ones out past the bound all gateways on this Redis share. */
  async keepDocument(hash: string, document: string, bound: DocumentBound): Promise<boolean> {
    const keys = [DOCUMENTS + hash, `${DOCUMENTS}index`, `${DOCUMENTS}sizes`, `${DOCUMENTS}bytes`];
    const lifetime = Math.max(1, Math.ceil(bound.lifetimeMs));
    const kept = await this.bounded(() =>
      this.redis.keepDocument(keys.length, ...keys, hash, document, lifetime, Date.now(), bound.maxEntries, bound.maxBytes, DOCUMENTS),
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
   * The first gateway sets the secret, the others read it (SET NX and GET: one round trip); checked again after
   * a lost connection and every `secretRecheckMs`, so a Redis that lost it gets it again.
   */
  secret(): Promise<string> {
    if (this.secretIsRecent()) return this.sharedSecret as Promise<string>;
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
      this.settledSecret = { check, secret };
      return secret;
    });
    this.sharedSecret = check;
    check.catch(() => {
      if (this.sharedSecret === check) this.sharedSecret = undefined; // try again on the next request
    });
    return check;
  }

  /** The secret, when the check in use (within the recheck period) has answered: no call, no wait. */
  secretNow(): string | undefined {
    const settled = this.settledSecret;
    return settled !== undefined && settled.check === this.sharedSecret && this.secretIsRecent() ? settled.secret : undefined;
  }

  private secretIsRecent(): boolean {
    return this.sharedSecret !== undefined && Date.now() - this.secretCheckedAt < this.secretRecheckMs;
  }

  async close(): Promise<void> {
    clearInterval(this.slotsReading);
    this.redis.disconnect();
  }
}
