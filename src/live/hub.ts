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

import { randomBytes } from 'node:crypto';
import { keyIdOf } from '../upstream/keys.js';

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

/** A result as gateways pass it to each other: its JSON text, and whether it ends the topic or the key. */
export interface SharedResult {
  text: string;
  final?: boolean;
  endsKey?: boolean;
}

/** What the gateways on one store share of their pollers (live/redis-share.ts). Any call may fail. */
export interface LiveShare {
  /** Takes or renews the topic's lock for `ttlMs` (and its last result's life with it): whether this gateway holds it. */
  claim(topic: Topic, ttlMs: number): Promise<boolean>;
  /** Lets go of the topic's lock, if this gateway holds it. */
  release(topic: Topic): Promise<void>;
  /** Sends a result to every other gateway's poller of the topic, and keeps it (not a final one) for `ttlMs`. */
  publish(topic: Topic, result: SharedResult, ttlMs: number): Promise<void>;
  /** The topic's last result, if a gateway polls it. */
  last(topic: Topic): Promise<string | null>;
  /** Calls `onResult` with each result another gateway publishes for the topic, until the returned function is called. */
  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void;
  /** Records the calls of the topic's latest poll for `ttlMs`; answers those of all the key's topics. */
  keyCalls(topic: Topic, calls: number, ttlMs: number): Promise<number>;
  /**
   * Records `calls` at this moment in the key's calls of the last minute, or adds them to `entry` (fewer
   * than none: some given back), an entry an earlier spend answered; answers them, these included.
   */
  spend(key: string, calls: number, entry?: string): Promise<Spent>;
  close(): Promise<void>;
}

/** A key's calls over the 60 s before now, the entry its spend made or changed, when the oldest call leaves them. */
export interface Spent {
  calls: number;
  /** Names the calls just recorded, for a later spend to change them (give back, or count what the poll made). */
  entry: string;
  /** Milliseconds until the oldest call counted leaves the window (the window's length when none is). */
  oldestLeavesInMs: number;
}

/** The key's calls are counted over the last this many milliseconds: a sliding window, any 60 s of it. */
export const WINDOW_MS = 60_000;

/** The calls of each key over the last minute, each entry with its time, in this process (without a share, or when it fails). */
export function localLedger(now: () => number): (key: string, calls: number, entry?: string) => Spent {
  const keys = new Map<string, Map<string, { at: number; calls: number }>>();
  let made = 0;
  return (key, calls, entry) => {
    const at = now();
    const entries = keys.get(key) ?? new Map<string, { at: number; calls: number }>();
    const known = entry === undefined ? undefined : entries.get(entry);
    let name = entry ?? '';
    if (known) known.calls += calls;
    // An entry already out of the window (or made by a share that failed since): what is added is recorded now.
    else if (calls > 0 || entry === undefined) entries.set((name = String(++made)), { at, calls });
    let total = 0;
    let oldest = at;
    for (const [id, spent] of entries) {
      if (spent.at <= at - WINDOW_MS || spent.calls <= 0) entries.delete(id);
      else {
        total += spent.calls;
        oldest = Math.min(oldest, spent.at);
      }
    }
    if (entries.size === 0) keys.delete(key);
    else keys.set(key, entries);
    return { calls: total, entry: name, oldestLeavesInMs: total > 0 ? oldest + WINDOW_MS - at : WINDOW_MS };
  };
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

export const LIVE_DEFAULTS = {
  intervalMs: 15_000,
  callsPerMinute: 30,
  maxLifetimeMs: 3_600_000,
  maxStreams: 1_000,
  maxStreamsPerKey: 20,
} as const;

/** A lock lives this much longer than the wait before its holder's next poll (or the interval, if longer). */
const LOCK_MARGIN_MS = 10_000;

export interface Topic {
  /** The key's keyed hash: what the budget is counted by. */
  key: string;
  /** The key, document and variables: streams with the same id share one poller. */
  id: string;
}

/** A subscriber's results; return() leaves (the client went away). */
export interface LiveStream<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T, undefined>>;
}

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

interface Subscriber {
  /** The latest result not yet taken, if any. */
  pending: { value: unknown } | null;
  ended: boolean;
  wake: (() => void) | null;
}

interface Poller {
  topic: Topic;
  poll: (signal: AbortSignal) => Promise<PollOutcome<unknown>>;
  /** What its streams are told while its first poll waits for the key's budget. */
  waiting: ((retryAfterS: number) => unknown) | undefined;
  /** They were told. */
  toldWaiting: boolean;
  subscribers: Set<Subscriber>;
  last: { text: string; value: unknown } | null;
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
  const { share } = options;
  const onShareError = options.onShareError ?? (() => undefined);
  const pollers = new Map<string, Poller>();
  const ledger = localLedger(now);
  /** The key's calls of the last minute, with `calls` added: on the share (all gateways) when there is one. */
  const spend = async (key: string, calls: number, entry?: string): Promise<Spent> => {
    if (!share) return ledger(key, calls, entry);
    try {
      return await share.spend(key, calls, entry);
    } catch (error) {
      onShareError('live budget', error);
      return ledger(key, calls, entry);
    }
  };
  /** Each pushed result's JSON text: made once to compare it, it need not be made again for each stream. */
  const texts = new WeakMap<object, string>();
  /** Calls on the share that nothing waits for (publish, renew, release): close() waits for them. */
  const unawaited = new Set<Promise<void>>();
  const inBackground = (operation: string, call: Promise<unknown>): Promise<void> => {
    const done = call.then(
      () => undefined,
      (error: unknown) => onShareError(operation, error),
    );
    unawaited.add(done);
    void done.finally(() => unawaited.delete(done));
    return done;
  };
  const ownSecret = randomBytes(32).toString('base64url');
  const keySecret = options.keySecret ?? (async () => ownSecret);

  /** The calls a minute the key's pollers made at their latest polls, all together. */
  const localKeyCalls = (key: string): number => {
    let calls = 0;
    for (const poller of pollers.values()) if (poller.topic.key === key) calls += poller.lastCalls;
    return calls;
  };

  /** Long enough that the key's pollers, each polling this often, stay within the key's calls a minute. */
  const delayFor = (keyCalls: number, backoffMs: number): number => Math.max(intervalMs, (keyCalls * 60_000) / callsPerMinute, backoffMs);

  const lockMs = (delayMs: number): number => Math.max(delayMs, intervalMs) + Math.max(LOCK_MARGIN_MS, intervalMs);

  const deliver = (poller: Poller, value: unknown): void => {
    for (const subscriber of poller.subscribers) {
      subscriber.pending = { value };
      subscriber.wake?.();
    }
  };

  /** Stops polling; with a share, another gateway whose streams watch the topic takes it over. */
  const stop = (poller: Poller): Promise<void> => {
    poller.stopped = true;
    poller.timer?.cancel();
    poller.abort.abort();
    poller.unlisten?.();
    pollers.delete(poller.topic.id);
    if (!share || !poller.claimed) return Promise.resolve();
    return inBackground('live release', share.release(poller.topic));
  };

  const endAll = (poller: Poller): void => {
    for (const subscriber of poller.subscribers) {
      subscriber.ended = true;
      subscriber.wake?.();
    }
  };

  /** A result polled here or by another gateway: pushed if it changed; it may end the topic or the key. */
  const receive = (poller: Poller, result: SharedResult, value: unknown = JSON.parse(result.text)): void => {
    if (poller.stopped) return;
    if (poller.last === null || poller.last.text !== result.text) {
      poller.last = { text: result.text, value };
      if (typeof value === 'object' && value !== null) texts.set(value, result.text);
      deliver(poller, value);
    }
    if (result.endsKey) {
      for (const other of [...pollers.values()]) {
        if (other === poller || other.topic.key !== poller.topic.key) continue;
        deliver(other, value);
        void stop(other);
        endAll(other);
      }
    }
    if (result.final) {
      void stop(poller);
      endAll(poller);
    }
  };

  const schedule = (poller: Poller, ms: number): void => {
    if (!poller.stopped) poller.timer = setTimer(() => void cycle(poller), ms);
  };

  /** Whether this gateway polls the topic now: without a share always; with one, while it holds the lock. */
  const mayPoll = async (poller: Poller): Promise<boolean> => {
    if (!share) return true;
    try {
      poller.claimed = await share.claim(poller.topic, lockMs(poller.delayMs));
    } catch (error) {
      onShareError('live claim', error);
      poller.claimed = true; // the share failing: poll for this gateway's own streams
    }
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
      if (share) void inBackground('live release', share.release(poller.topic));
      return;
    }
    // The poll's calls count before it starts: as many as its last poll made (one for a first poll).
    const { key } = poller.topic;
    const reserved = Math.max(1, poller.lastCalls);
    const spent = await spend(key, reserved);
    if (spent.calls > callsPerMinute && spent.calls > reserved) {
      // Past the key's budget: given back, and tried again once the oldest call has left the window.
      void spend(key, -reserved, spent.entry);
      if (poller.last === null && poller.waiting && !poller.toldWaiting && !poller.stopped) {
        poller.toldWaiting = true;
        deliver(poller, poller.waiting(Math.ceil(spent.oldestLeavesInMs / 1_000)));
      }
      schedule(poller, spent.oldestLeavesInMs);
      return;
    }
    // Polls are timed from start to start: the interval is the period, however long a poll takes.
    const startedAt = now();
    let outcome: PollOutcome<unknown>;
    poller.abort = new AbortController();
    try {
      outcome = await poller.poll(poller.abort.signal);
    } catch {
      // Aborted: the last subscriber left. Anything else thrown (the poll function answers the
      // upstream's failures as results) is tried again at the next interval.
      if (poller.abort.signal.aborted) void spend(key, -reserved, spent.entry);
      schedule(poller, poller.delayMs);
      return;
    }
    if (outcome.upstreamCalls !== reserved) void spend(key, outcome.upstreamCalls - reserved, spent.entry);
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
      try {
        keyCalls = await share.keyCalls(poller.topic, outcome.upstreamCalls, 2 * lockMs(delayFor(keyCalls, backoffMs)));
      } catch (error) {
        onShareError('live budget', error);
      }
    }
    poller.delayMs = delayFor(keyCalls, backoffMs);
    if (share && (poller.last?.text !== result.text || result.final)) {
      void inBackground('live publish', share.publish(poller.topic, result, lockMs(poller.delayMs)));
    }
    // The lock lives as long as the wait before the next poll, however long a Retry-After makes it.
    if (share && !result.final && poller.delayMs > intervalMs) {
      void inBackground('live claim', share.claim(poller.topic, lockMs(poller.delayMs)));
    }
    receive(poller, result, outcome.result);
    schedule(poller, Math.max(0, poller.delayMs - (now() - startedAt)));
  };

  /** A new poller: with a share, it listens for other gateways' results and starts from the last one kept. */
  const start = async (poller: Poller): Promise<void> => {
    if (share) {
      poller.unlisten = share.listen(poller.topic, (result) => {
        // Another gateway's text that is not JSON (nothing of ours writes one) is dropped, not thrown into ioredis.
        try {
          receive(poller, result);
        } catch (error) {
          onShareError('live message', error);
        }
      });
      try {
        const last = await share.last(poller.topic);
        if (last !== null && poller.last === null) receive(poller, { text: last });
      } catch (error) {
        onShareError('live last', error);
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
      const subscriber: Subscriber = { pending: null, ended: false, wake: null };
      let poller = pollers.get(topic.id);
      if (poller) {
        poller.subscribers.add(subscriber);
        if (poller.last) subscriber.pending = { value: poller.last.value };
      } else {
        poller = {
          topic,
          poll,
          waiting,
          toldWaiting: false,
          subscribers: new Set([subscriber]),
          last: null,
          lastCalls: 0,
          delayMs: intervalMs,
          abort: new AbortController(),
          timer: null,
          stopped: false,
          claimed: false,
          unlisten: null,
        };
        pollers.set(topic.id, poller);
        void start(poller);
      }
      const own = poller;
      const leave = (): IteratorResult<T, undefined> => {
        subscriber.ended = true;
        subscriber.pending = null;
        own.subscribers.delete(subscriber);
        if (own.subscribers.size === 0 && !own.stopped) void stop(own);
        subscriber.wake?.();
        return { done: true, value: undefined };
      };
      // A hand-written iterator, not an async generator: a generator waiting for the next result would
      // only see return() (the client left) once that result came, and its poller would poll on meanwhile.
      const iterator: LiveStream<T> = {
        next: async () => {
          while (true) {
            if (subscriber.pending) {
              const { value } = subscriber.pending;
              subscriber.pending = null;
              return { done: false, value: value as T };
            }
            if (subscriber.ended) return leave();
            await new Promise<void>((resolve) => {
              subscriber.wake = resolve;
            });
            subscriber.wake = null;
          }
        },
        return: async () => leave(),
        [Symbol.asyncIterator]: () => iterator,
      };
      return iterator;
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
      for (const poller of pollers.values()) if (poller.topic.key === key) streams += poller.subscribers.size;
      return streams;
    },
    get pollers() {
      return pollers.size;
    },
    get streams() {
      let streams = 0;
      for (const poller of pollers.values()) streams += poller.subscribers.size;
      return streams;
    },
    async close() {
      const released = [...pollers.values()].map((poller) => {
        endAll(poller);
        return stop(poller);
      });
      await Promise.all([...released, ...unawaited]);
      await share?.close();
    },
  };
}
