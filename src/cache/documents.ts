// Persisted documents (APQ) kept in Redis for every gateway on it, under a bound of their own, each for a
// lifetime after its last registration or use. The Redis store (redis-store.ts) lends its connection.
import type { Redis } from 'ioredis';
import { PREFIX } from './redis-connection.js';

/** One hash tag for all documents: the script that keeps one evicts others, so on a cluster they share a slot. */
const DOCUMENTS = `${PREFIX}{apq}:`;

/** The bound of the persisted documents that all gateways on one Redis keep together. */
export interface DocumentBound {
  maxEntries: number;
  maxBytes: number;
  lifetimeMs: number;
}

/**
 * Keeps a document within the bound, in one step: the document with a lifetime, an index of hashes by last
 * registration (the oldest out first), their sizes and the bytes of all. An expired document stays counted
 * until the index lets it go. KEYS: the document, the index, the sizes, the byte count; ARGV: hash,
 * document, lifetime (ms), now, most documents, most bytes, the prefix of documents' keys.
 */
export const KEEP_DOCUMENT = `
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

/** A connection with KEEP_DOCUMENT defined as a command. */
export interface RedisWithDocuments extends Redis {
  keepDocument(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
}

/** A persisted document by its hash; a document found lives `lifetimeMs` longer and is the newest. */
export async function readDocument(
  redis: Redis,
  bounded: <T>(call: () => Promise<T>) => Promise<T>,
  hash: string,
  bound: DocumentBound,
): Promise<string | undefined> {
  const document = await bounded(() => redis.get(DOCUMENTS + hash));
  if (document === null) return undefined;
  // Not waited for: the request has its document; a failure only makes it older than it is.
  void redis
    .multi()
    .pexpire(DOCUMENTS + hash, bound.lifetimeMs)
    .zadd(`${DOCUMENTS}index`, 'XX', Date.now(), hash)
    .exec()
    .catch(() => undefined);
  return document;
}

/** Keeps a persisted document, the oldest ones out past the bound. */
export async function keepDocument(
  redis: RedisWithDocuments,
  bounded: <T>(call: () => Promise<T>) => Promise<T>,
  hash: string,
  document: string,
  bound: DocumentBound,
): Promise<boolean> {
  const kept = await bounded(() =>
    redis.keepDocument(
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
