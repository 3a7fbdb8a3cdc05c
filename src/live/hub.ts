// The shared pollers behind subscriptions: one poller per topic (a key's keyed hash, a document and its
// variables), however many streams watch it. The first subscriber starts it; a later one gets the last
// result at once; when the last one leaves, polling stops and the poll in flight is aborted. A result is
// pushed only when it differs from the last one pushed, and each subscriber holds at most one result
// not yet taken: a slow subscriber gets the latest, never a backlog.
//
// Why one poller: ten tabs of one team's dashboard would otherwise make ten times the upstream calls
// against an install that throttles each key. The key's budget (`callsPerMinute`) bounds the calls of
// all of one key's pollers together: each poller waits at least its share of the minute for the calls
// its last poll made, so intervals stretch as a key watches more documents. And every poll, a topic's
// first one included, is counted in the key's calls of the last minute before it starts (as many as
// its last poll made, one for a first; corrected once it is over): past the budget it waits for the
// minute to move on, and a topic with no result yet tells its streams so (`waiting`), as a 429 would.
// Opening and closing streams on new documents cannot make a key poll more.
//
// With a share (REDIS_URL: live/redis-share.ts), the gateways on it poll each topic once among them: a
// poller polls only while it holds the topic's lock, and otherwise passes on what the holder publishes;
// the key's budget counts the calls of every gateway's pollers. A share that fails makes each gateway
// poll for its own streams, as without one.
//
// The parts: a topic's results and streams (live/broadcast.ts), the key's budget (live/key-budget.ts),
// the share's locks and publishing (live/share.ts); this module runs each topic's poller with them.

import { randomBytes } from 'node:crypto';
import { decimalSeconds, defaultsOf, integer, seconds } from '../settings.js';
import { keyIdOf } from '../api-key.js';
import { Broadcast, type LiveStream } from './broadcast.js';
import { createKeyBudget } from './key-budget.js';
import { type LiveShare, type SharedResult, SharedTopics, type Topic } from './share.js';

/** What one poll answered, as the live plugin reads it from the query's result. */
export interface PollOutcome<T> {
  /** The result to push: JSON (compared, and shared between gateways, as its text). */
  result: T;
  /** Upstream calls the poll made (what counts against the key's budget). */
  upstreamCalls: number;
  /** The stream ends after this result is pushed (NOT_FOUND, UNAUTHENTICATED, a refused document). */
  final: boolean;
  /** Every stream of the key ends with this result (a 401: the key was revoked), not only this topic's. */
  endsKey?: boolean;
  /** Wait at least this long before the next poll (a 429's Retry-After; a rate limit running low). */
  backoffMs?: number;
}

export interface LiveHubOptions {
  /** The interval aimed for between two polls of a topic (LIVE_INTERVAL_S; default 15 s). */
  intervalMs?: number;
  /** Upstream calls a minute one key's polls may make together (LIVE_CALLS_PER_MIN; default 30). */
  callsPerMinute?: number;
  /** What the gateways on one Redis share; none: this gateway polls for its own streams. */
  share?: LiveShare;
  /** The secret that keys the hash of API keys in topics: shared by the gateways on one store. Default: this process's own. */
  keySecret?: () => Promise<string>;
  /** Called when the share fails (the hub goes on as without it). */
  onShareError?: (operation: string, error: unknown) => void;
  /** Timers of polls, for tests; default setTimeout. */
  setTimer?: (run: () => void, ms: number) => { cancel(): void };
  /** The clock polls are timed by (milliseconds), for tests; default performance.now. */
  now?: () => number;
}

/** Subscriptions' pollers and streams: how often they poll, what one key may spend, how many streams. */
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

/** The live settings when none is set. */
export const LIVE_DEFAULTS = defaultsOf(LIVE_SETTINGS);

export interface LiveHub {
  /**
   * A stream of the topic's results, polled by `poll` while anyone watches; return() leaves it. While the
   * key's budget keeps a topic with no result yet from its first poll, its streams get `waiting(seconds)`.
   */
  subscribe<T>(topic: Topic, poll: (signal: AbortSignal) => Promise<PollOutcome<T>>, waiting?: (retryAfterS: number) => T): LiveStream<T>;
  /** A key's id in topics: a keyed hash of its Authorization header, alike in every gateway on the share. */
  keyId(authorization: string): Promise<string>;
  /** The JSON text of a result the hub pushed (the same object goes to every stream of its topic). */
  textOf(value: unknown): string | undefined;
  /** Streams open now with this key (LIVE_MAX_STREAMS_PER_KEY bounds them). */
  streamsOf(key: string): number;
  /** Pollers running now, one per topic watched here (for tests and metrics). */
  readonly pollers: number;
  /** Streams open now, all keys together (for metrics). */
  readonly streams: number;
  /** Ends every stream (shutdown) and closes the share. */
  close(): Promise<void>;
}

interface Poller {
  topic: Topic;
  poll: (signal: AbortSignal) => Promise<PollOutcome<unknown>>;
  /** What its streams are told while its first poll waits for the key's budget. */
  waiting: ((retryAfterS: number) => unknown) | undefined;
  /** They were told. */
  toldWaiting: boolean;
  /** Its streams and the last result they were pushed. */
  streams: Broadcast;
  /** Calls of the latest poll: this poller's share of its key's budget. */
  lastCalls: number;
  /** The wait before the next poll, as last planned. */
  delayMs: number;
  /**
   * The poll in flight's own: stop() aborts it. One per poll, never a listener on something longer-lived:
   * whatever a poll hangs on its signal (the request's, the upstream calls') goes with the poll.
   */
  abort: AbortController;
  timer: { cancel(): void } | null;
  stopped: boolean;
  /** Whether this gateway may hold the topic's lock (it is released when the poller stops). */
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

  /** The calls a minute the key's pollers made at their latest polls, all together. */
  const localKeyCalls = (key: string): number => {
    let calls = 0;
    for (const poller of pollers.values()) if (poller.topic.key === key) calls += poller.lastCalls;
    return calls;
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

  /** Whether this gateway polls the topic now: without a share always; with one, while it holds the lock. */
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
      // Past the key's budget: tried again once the minute has moved on.
      if (!poller.streams.started && poller.waiting && !poller.toldWaiting && !poller.stopped) {
        poller.toldWaiting = true;
        poller.streams.deliver(poller.waiting(Math.ceil(reservation.retryInMs / 1_000)));
      }
      schedule(poller, reservation.retryInMs);
      return;
    }
    const { reserved, entry } = reservation;
    // Polls are timed from start to start: the interval is the period, however long a poll takes.
    const startedAt = now();
    let outcome: PollOutcome<unknown>;
    poller.abort = new AbortController();
    try {
      outcome = await poller.poll(poller.abort.signal);
    } catch {
      // Aborted: the last subscriber left, and the poll's calls are given back. Anything else thrown (the
      // poll function answers the upstream's failures as results) is tried again at the next interval.
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
    let keyCalls = localKeyCalls(poller.topic.key);
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
      let streams = 0;
      for (const poller of pollers.values()) if (poller.topic.key === key) streams += poller.streams.size;
      return streams;
    },
    get pollers() {
      return pollers.size;
    },
    get streams() {
      let streams = 0;
      for (const poller of pollers.values()) streams += poller.streams.size;
      return streams;
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
