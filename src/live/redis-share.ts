// The live share (live/share.ts) on one Redis: a lock per topic with an expiry (a holder that dies is
// replaced once it runs out), results through pub/sub with the last one kept beside the lock, and per key
// each topic's latest calls and the calls of the last 60 s. Topics are named by a hash of their id:
// neither a key nor a document is written to Redis in clear.
import { createHash, randomBytes } from 'node:crypto';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { Redis } from 'ioredis';
import { PREFIX, boundedCall, connectRedis } from '../cache/redis-connection.js';
import { WINDOW_MS, type Spent } from './key-budget.js';
import type { LiveShare, SharedResult, Topic } from './share.js';

/** KEYS: the lock, the last result; ARGV: this gateway, the lifetime (ms). 1 when this gateway holds the lock. */
const CLAIM = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

/** KEYS: the lock, the key's calls; ARGV: this gateway, the topic's field. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[2], ARGV[2])
return 1`;

/** KEYS: the key's calls; ARGV: the topic's field, its calls, how long they count (ms); by Redis's clock. */
const KEY_CALLS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. (now + ttl))
local total = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local calls, untilAt = string.match(fields[i + 1], '^(%d+):(%d+)$')
  if calls and tonumber(untilAt) > now then total = total + tonumber(calls) else redis.call('HDEL', KEYS[1], fields[i]) end
end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return total`;

/**
 * KEYS: the key's calls of the window; ARGV: the calls to add, the window (ms), the entry ('' for a new
 * one: "<ms>:<name>"), a name unique to this call. Answers Spent (live/key-budget.ts).
 */
const SPEND = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local calls = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local entry = ARGV[3]
if entry == '' or redis.call('HEXISTS', KEYS[1], entry) == 0 then
  if entry ~= '' and calls <= 0 then calls = 0 end
  entry = string.format('%d', now) .. ':' .. ARGV[4]
end
if calls ~= 0 or ARGV[3] == '' then redis.call('HINCRBY', KEYS[1], entry, calls) end
local total = 0
local oldest = now
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local at = tonumber(string.match(fields[i], '^(%d+):'))
  local spent = tonumber(fields[i + 1])
  if at and at > now - windowMs and spent > 0 then
    total = total + spent
    if at < oldest then oldest = at end
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
redis.call('PEXPIRE', KEYS[1], windowMs)
if total > 0 then return {total, entry, oldest + windowMs - now} end
return {total, entry, windowMs}`;

interface RedisWithScripts extends Redis {
  liveClaim(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  liveRelease(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  liveKeyCalls(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<number>;
  liveSpend(numberOfKeys: number, ...keysAndArguments: (string | number)[]): Promise<[number, string, number]>;
}

const LIVE = `${PREFIX}live:`;

// The key's keyed hash as a hash tag (`{…}`): on a cluster, each script stays within one slot.
const lockOf = (topic: Topic, name: string): string => `${LIVE}lock:{${topic.key}}:${name}`;
const lastOf = (topic: Topic, name: string): string => `${LIVE}last:{${topic.key}}:${name}`;
const callsOf = (key: string): string => `${LIVE}calls:{${key}}`;

interface Message extends SharedResult {
  from: string;
}

export class RedisLiveShare implements LiveShare {
  private readonly self = randomBytes(12).toString('base64url');
  private readonly redis: RedisWithScripts;
  private readonly subscriber: Redis;
  private readonly events: ReturnType<typeof createRedisEventTarget>;
  private readonly names = new WeakMap<Topic, string>();
  /** Publishes under way (the event target does not wait for them): close() does. */
  private readonly publishing = new Set<Promise<unknown>>();

  constructor(
    url: string,
    private readonly timeoutMs: number,
    onError: (operation: string, error: unknown) => void = () => undefined,
  ) {
    const redis = connectRedis(url, timeoutMs);
    redis.defineCommand('liveClaim', { lua: CLAIM });
    redis.defineCommand('liveRelease', { lua: RELEASE });
    redis.defineCommand('liveKeyCalls', { lua: KEY_CALLS });
    redis.defineCommand('liveSpend', { lua: SPEND });
    this.redis = redis as RedisWithScripts;
    // A connection in subscriber mode takes no other command: one of its own.
    this.subscriber = connectRedis(url, timeoutMs);
    const { subscriber } = this;
    // The event target drops the promises of publish and (un)subscribe: caught, not unhandled rejections.
    const publishClient = {
      publish: (channel: string, message: string) => {
        const sent = this.bounded(() => redis.publish(channel, message)).catch((error: unknown) => onError('live publish', error));
        this.publishing.add(sent);
        void sent.finally(() => this.publishing.delete(sent));
        return sent;
      },
    };
    const subscribeClient = {
      on: (event: string, listener: (...args: unknown[]) => void) => subscriber.on(event, listener),
      subscribe: (channel: string) => subscriber.subscribe(channel).catch((error: unknown) => onError('live subscribe', error)),
      unsubscribe: (channel: string) => subscriber.unsubscribe(channel).catch((error: unknown) => onError('live unsubscribe', error)),
    };
    this.events = createRedisEventTarget({
      publishClient: publishClient as unknown as Redis,
      subscribeClient: subscribeClient as unknown as Redis,
      // A message that is not JSON (anyone on the Redis may publish) is null: the event target parses inside
      // ioredis's handler, where a throw would end the process.
      serializer: { stringify: JSON.stringify, parse: (text: string) => parseOrNull(text) },
    });
  }

  private bounded<T>(call: () => Promise<T>): Promise<T> {
    return boundedCall(this.redis, this.timeoutMs, call);
  }

  private name(topic: Topic): string {
    let name = this.names.get(topic);
    if (name === undefined) this.names.set(topic, (name = createHash('sha256').update(topic.id).digest('base64url').slice(0, 32)));
    return name;
  }

  async claim(topic: Topic, ttlMs: number): Promise<boolean> {
    const name = this.name(topic);
    const held = await this.bounded(() => this.redis.liveClaim(2, lockOf(topic, name), lastOf(topic, name), this.self, ttl(ttlMs)));
    return held === 1;
  }

  async release(topic: Topic): Promise<void> {
    const name = this.name(topic);
    await this.bounded(() => this.redis.liveRelease(2, lockOf(topic, name), callsOf(topic.key), this.self, name));
  }

  async publish(topic: Topic, result: SharedResult, ttlMs: number): Promise<void> {
    const name = this.name(topic);
    // A final result is for the streams open now: one that joins later polls again.
    const last = lastOf(topic, name);
    if (result.final) await this.bounded(() => this.redis.del(last));
    else await this.bounded(() => this.redis.set(last, result.text, 'PX', ttl(ttlMs)));
    const message: Message = { ...result, from: this.self };
    this.events.dispatchEvent(new CustomEvent(`${LIVE}${name}`, { detail: message }));
  }

  async last(topic: Topic): Promise<string | null> {
    return this.bounded(() => this.redis.get(lastOf(topic, this.name(topic))));
  }

  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void {
    const channel = `${LIVE}${this.name(topic)}`;
    const listener = (event: Event): void => {
      const message = (event as CustomEvent<Partial<Message> | null>).detail;
      // This gateway's own results reached its streams when it polled them.
      if (typeof message !== 'object' || message === null || message.from === this.self || typeof message.text !== 'string') return;
      onResult({ text: message.text, ...(message.final ? { final: true } : {}), ...(message.endsKey ? { endsKey: true } : {}) });
    };
    this.events.addEventListener(channel, listener);
    return () => this.events.removeEventListener(channel, listener);
  }

  async keyCalls(topic: Topic, calls: number, ttlMs: number): Promise<number> {
    const name = this.name(topic);
    return this.bounded(() => this.redis.liveKeyCalls(1, callsOf(topic.key), name, Math.max(0, Math.round(calls)), ttl(ttlMs)));
  }

  async spend(key: string, calls: number, entry = ''): Promise<Spent> {
    const [total, recorded, oldestLeavesInMs] = await this.bounded(() =>
      this.redis.liveSpend(1, `${LIVE}spent:{${key}}`, Math.round(calls), WINDOW_MS, entry, randomBytes(6).toString('base64url')),
    );
    return { calls: total, entry: recorded, oldestLeavesInMs };
  }

  async close(): Promise<void> {
    await Promise.all(this.publishing);
    this.redis.disconnect();
    this.subscriber.disconnect();
  }
}

/** PX and PEXPIRE take whole milliseconds, at least one. */
const ttl = (ms: number): number => Math.max(1, Math.ceil(ms));

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
