// The shared pollers behind subscriptions: one poller per topic (a key's keyed hash, a document and its
// variables), however many streams watch it, so that ten tabs of one dashboard make the calls of one. The
// first subscriber starts it; when the last one leaves, polling stops and the poll in flight is aborted.
// It runs with a topic's streams (live/broadcast.ts), the key's budget (live/key-budget.ts) and, with
// REDIS_URL, the share among gateways (live/share.ts).

import { randomBytes } from 'node:crypto';
import { decimalSeconds, defaultsOf, integer, seconds } from '../settings.js';
import { keyIdOf } from '../api-key.js';
import { Broadcast, type LiveStream } from './broadcast.js';
import { createKeyBudget } from './key-budget.js';
import { type LiveShare, type SharedResult, SharedTopics, type Topic } from './share.js';

/** What one poll answered, as the live plugin reads it from the query's result. */
export interface PollOutcome<T> {
  /** JSON: compared, and shared between gateways, as its text. */
  result: T;
  upstreamCalls: number;
  /** The stream ends after this result (NOT_FOUND, UNAUTHENTICATED, a refused document). */
  final: boolean;
  /** Every stream of the key ends with this result (a 401: the key was revoked). */
  endsKey?: boolean;
  /** The least wait before the next poll (a 429's Retry-After; a rate limit running low). */
  backoffMs?: number;
}

export interface LiveHubOptions {
  intervalMs?: number;
  callsPerMinute?: number;
  /** None: this gateway polls for its own streams. */
  share?: LiveShare;
  /** What keys the hash of API keys in topics, alike in the gateways on one store; default: this process's own. */
  keySecret?: () => Promise<string>;
  onShareError?: (operation: string, error: unknown) => void;
  /** For tests: default setTimeout and performance.now. */
  setTimer?: (run: () => void, ms: number) => { cancel(): void };
  now?: () => number;
}

export const LIVE_SETTINGS = {
  intervalMs: decimalSeconds('LIVE_INTERVAL_S', {
    fallbackMs: 15_000,
    min: 0.1,
    max: 86_400,
    doc: "the interval a subscription's poll aims for (up to 3 decimals: 0.25)",
  }),
  callsPerMinute: integer('LIVE_CALLS_PER_MIN', {
    fallback: 30,
    min: 1,
    max: 100_000,
    unit: 'calls a minute',
    doc: "upstream calls a minute that all of one key's live polls make together",
  }),
  maxLifetimeMs: seconds('LIVE_MAX_LIFETIME_S', {
    fallbackMs: 3_600_000,
    min: 1,
    max: 604_800,
    doc: "a subscription's stream is closed between 90 % and all of this after it opened",
  }),
  maxStreams: integer('LIVE_MAX_STREAMS', {
    fallback: 1_000,
    min: 1,
    max: 1_000_000,
    unit: 'streams',
    doc: 'event streams open at once in this process (more: 503)',
  }),
  maxStreamsPerKey: integer('LIVE_MAX_STREAMS_PER_KEY', {
    fallback: 20,
    min: 1,
    max: 1_000_000,
    unit: 'streams',
    doc: 'event streams open with one key in this process (more: the stream ends with OVERLOADED)',
  }),
};

export const LIVE_DEFAULTS = defaultsOf(LIVE_SETTINGS);

export interface LiveHub {
  /** While the key's budget holds back a topic's first poll, its streams get `waiting(seconds)`. */
  subscribe<T>(topic: Topic, poll: (signal: AbortSignal) => Promise<PollOutcome<T>>, waiting?: (retryAfterS: number) => T): LiveStream<T>;
  /** A keyed hash of the Authorization header, alike in every gateway on the share. */
  keyId(authorization: string): Promise<string>;
  /** The JSON text of a result the hub pushed (one object goes to every stream of its topic). */
  textOf(value: unknown): string | undefined;
  streamsOf(key: string): number;
  readonly pollers: number;
  readonly streams: number;
  /** Ends every stream and closes the share. */
  close(): Promise<void>;
}

interface Poller {
  topic: Topic;
  poll: (signal: AbortSignal) => Promise<PollOutcome<unknown>>;
  waiting: ((retryAfterS: number) => unknown) | undefined;
  toldWaiting: boolean;
  streams: Broadcast;
  /** Calls of the latest poll: this poller's share of its key's budget. */
  lastCalls: number;
  delayMs: number;
  /** One per poll, so that what a poll hangs on its signal goes with the poll, never piles up. */
  abort: AbortController;
  timer: { cancel(): void } | null;
  stopped: boolean;
  /** This gateway may hold the topic's lock: released when the poller stops. */
  claimed: boolean;
  unlisten: (() => void) | null;
}

const defaultTimer = (run: () => void, ms: number): { cancel(): void } => {
  const handle = setTimeout(run, ms);
  handle.unref();
  return { cancel: () => clearTimeout(handle) };
};

export function createLiveHub(options: LiveHubOptions = {}): LiveHub {
  const intervalMs = options.intervalMs ?? LIVE_DEFAULTS.intervalMs;
  const callsPerMinute = options.callsPerMinute ?? LIVE_DEFAULTS.callsPerMinute;
  const setTimer = options.setTimer ?? defaultTimer;
  const now = options.now ?? (() => performance.now());
  const onShareError = options.onShareError ?? (() => undefined);
  const liveShare = options.share;
  const share = liveShare && new SharedTopics(liveShare, intervalMs, onShareError);
  const pollers = new Map<string, Poller>();
  const sharedSpend = liveShare && ((key: string, calls: number, entry?: string) => liveShare.spend(key, calls, entry));
  const budget = createKeyBudget({ callsPerMinute, intervalMs, now, sharedSpend, onShareError });
  const texts = new WeakMap<object, string>();
  const ownSecret = randomBytes(32).toString('base64url');
  const keySecret = options.keySecret ?? (async () => ownSecret);

  /** `of` summed over the pollers (of `key` alone, when given). */
  const sum = (of: (poller: Poller) => number, key?: string): number => {
    let total = 0;
    for (const poller of pollers.values()) if (key === undefined || poller.topic.key === key) total += of(poller);
    return total;
  };

  /** Stops polling; with a share, another gateway whose streams watch the topic takes it over. */
  const stop = (poller: Poller): Promise<void> => {
    poller.stopped = true;
    poller.timer?.cancel();
    poller.abort.abort();
    poller.unlisten?.();
    pollers.delete(poller.topic.id);
    if (!share || !poller.claimed) return Promise.resolve();
    return share.release(poller.topic);
  };

  /** A result polled here or by another gateway: pushed if it changed; it may end the topic or the key. */
  const receive = (poller: Poller, result: SharedResult, value: unknown = JSON.parse(result.text)): void => {
    if (poller.stopped) return;
    poller.streams.offer(result.text, value);
    if (result.endsKey) {
      for (const other of [...pollers.values()]) {
        if (other === poller || other.topic.key !== poller.topic.key) continue;
        other.streams.deliver(value);
        void stop(other);
        other.streams.endAll();
      }
    }
    if (result.final) {
      void stop(poller);
      poller.streams.endAll();
    }
  };

  const schedule = (poller: Poller, ms: number): void => {
    if (!poller.stopped) poller.timer = setTimer(() => void cycle(poller), ms);
  };

  const mayPoll = async (poller: Poller): Promise<boolean> => {
    if (!share) return true;
    poller.claimed = await share.claim(poller.topic, poller.delayMs);
    return poller.claimed;
  };

  const cycle = async (poller: Poller): Promise<void> => {
    poller.timer = null;
    if (!(await mayPoll(poller))) {
      // Another gateway polls it: its results come through the share. Take over if it stops.
      schedule(poller, intervalMs);
      return;
    }
    if (poller.stopped) {
      // Its last stream left while the lock was being taken: let another gateway have it at once.
      if (share) void share.release(poller.topic);
      return;
    }
    const { key } = poller.topic;
    const reservation = await budget.reserve(key, poller.lastCalls);
    if (!reservation.granted) {
      if (!poller.streams.started && poller.waiting && !poller.toldWaiting && !poller.stopped) {
        poller.toldWaiting = true;
        poller.streams.deliver(poller.waiting(Math.ceil(reservation.retryInMs / 1_000)));
      }
      schedule(poller, reservation.retryInMs);
      return;
    }
    const { reserved, entry } = reservation;
    // Timed from start to start: the interval is the period, however long a poll takes.
    const startedAt = now();
    let outcome: PollOutcome<unknown>;
    poller.abort = new AbortController();
    try {
      outcome = await poller.poll(poller.abort.signal);
    } catch {
      // Aborted (the last subscriber left): its calls are given back. Anything else is tried again later.
      budget.settle(key, reserved, poller.abort.signal.aborted ? 0 : reserved, entry);
      schedule(poller, poller.delayMs);
      return;
    }
    budget.settle(key, reserved, outcome.upstreamCalls, entry);
    if (poller.stopped) return;
    poller.lastCalls = outcome.upstreamCalls;
    const result: SharedResult = {
      text: JSON.stringify(outcome.result),
      ...(outcome.final ? { final: true } : {}),
      ...(outcome.endsKey ? { endsKey: true } : {}),
    };
    const backoffMs = outcome.backoffMs ?? 0;
    let keyCalls = sum((other) => other.lastCalls, poller.topic.key);
    if (share) {
      const ttlMs = 2 * share.lockMs(budget.delayFor(keyCalls, backoffMs));
      keyCalls = await share.keyCalls(poller.topic, outcome.upstreamCalls, ttlMs, keyCalls);
    }
    poller.delayMs = budget.delayFor(keyCalls, backoffMs);
    if (share && (!poller.streams.isLast(result.text) || result.final)) share.publish(poller.topic, result, poller.delayMs);
    if (share && !result.final && poller.delayMs > intervalMs) share.renew(poller.topic, poller.delayMs);
    receive(poller, result, outcome.result);
    schedule(poller, Math.max(0, poller.delayMs - (now() - startedAt)));
  };

  /** A new poller: with a share, it listens for other gateways' results and starts from the last one kept. */
  const start = async (poller: Poller): Promise<void> => {
    if (share) {
      poller.unlisten = share.listen(poller.topic, (result) => receive(poller, result));
      const last = await share.last(poller.topic);
      if (last !== null && !poller.streams.started) {
        try {
          receive(poller, { text: last });
        } catch (error) {
          onShareError('live last', error);
        }
      }
    }
    if (!poller.stopped) await cycle(poller);
  };

  return {
    subscribe<T>(
      topic: Topic,
      poll: (signal: AbortSignal) => Promise<PollOutcome<T>>,
      waiting?: (retryAfterS: number) => T,
    ): LiveStream<T> {
      const known = pollers.get(topic.id);
      if (known) return known.streams.join<T>();
      const poller: Poller = {
        topic,
        poll,
        waiting,
        toldWaiting: false,
        streams: new Broadcast(texts, () => {
          if (!poller.stopped) void stop(poller);
        }),
        lastCalls: 0,
        delayMs: intervalMs,
        abort: new AbortController(),
        timer: null,
        stopped: false,
        claimed: false,
        unlisten: null,
      };
      pollers.set(topic.id, poller);
      const stream = poller.streams.join<T>();
      void start(poller);
      return stream;
    },
    async keyId(authorization) {
      // Without the shared secret (Redis failing), this gateway names the key's topics on its own.
      const secret = await keySecret().catch((error: unknown) => {
        onShareError('live secret', error);
        return ownSecret;
      });
      return keyIdOf(secret, authorization);
    },
    textOf(value) {
      return typeof value === 'object' && value !== null ? texts.get(value) : undefined;
    },
    streamsOf(key) {
      return sum((poller) => poller.streams.size, key);
    },
    get pollers() {
      return pollers.size;
    },
    get streams() {
      return sum((poller) => poller.streams.size);
    },
    async close() {
      const released = [...pollers.values()].map((poller) => {
        poller.streams.endAll();
        return stop(poller);
      });
      await Promise.all([...released, share?.settled()]);
      await share?.close();
    },
  };
}
