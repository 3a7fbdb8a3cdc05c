// The shared pollers behind subscriptions: one poller per topic (a key's keyed hash, a document and its
// variables), however many streams watch it. The first subscriber starts it; a later one gets the last
// result at once; when the last one leaves, polling stops and the poll in flight is aborted. A result is
// pushed only when it differs from the last one pushed, and each subscriber holds at most one result
// not yet taken: a slow subscriber gets the latest, never a backlog.
//
// Why one poller: ten tabs of one team's dashboard would otherwise make ten times the upstream calls
// against an install that throttles each key. The key's budget (`callsPerMinute`) bounds the calls of
// all of one key's pollers together: each poller waits at least its share of the minute for the calls
// its last poll made, so intervals stretch as a key watches more documents.

/** What one poll answered, as the live plugin reads it from the query's result. */
export interface PollOutcome<T> {
  /** The result to push (compared by its JSON text). */
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
  /** Timers of polls, for tests; default setTimeout. */
  setTimer?: (run: () => void, ms: number) => { cancel(): void };
}

export const LIVE_DEFAULTS = {
  intervalMs: 15_000,
  callsPerMinute: 30,
  maxLifetimeMs: 3_600_000,
  maxStreams: 1_000,
  maxStreamsPerKey: 20,
} as const;

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
  /** A stream of the topic's results, polled by `poll` while anyone watches; return() leaves it. */
  subscribe<T>(topic: Topic, poll: (signal: AbortSignal) => Promise<PollOutcome<T>>): LiveStream<T>;
  /** Streams open now with this key (LIVE_MAX_STREAMS_PER_KEY bounds them). */
  streamsOf(key: string): number;
  /** Pollers running now (for tests and metrics). */
  readonly pollers: number;
  /** Ends every stream (drain, shutdown). */
  close(): void;
}

interface Subscriber {
  /** The latest result not yet taken, if any. */
  pending: { text: string; value: unknown } | null;
  ended: boolean;
  wake: (() => void) | null;
}

interface Poller {
  topic: Topic;
  poll: (signal: AbortSignal) => Promise<PollOutcome<unknown>>;
  subscribers: Set<Subscriber>;
  last: { text: string; value: unknown; final: boolean } | null;
  /** Calls of the latest poll: this poller's share of its key's budget. */
  lastCalls: number;
  abort: AbortController;
  timer: { cancel(): void } | null;
  stopped: boolean;
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
  const pollers = new Map<string, Poller>();

  /** The calls a minute the key's pollers made at their latest polls, all together. */
  const keyCalls = (key: string): number => {
    let calls = 0;
    for (const poller of pollers.values()) if (poller.topic.key === key) calls += poller.lastCalls;
    return calls;
  };

  /** Long enough that the key's pollers, each polling this often, stay within the key's calls a minute. */
  const delayOf = (poller: Poller, backoffMs: number): number => {
    const budgetMs = (keyCalls(poller.topic.key) * 60_000) / callsPerMinute;
    return Math.max(intervalMs, budgetMs, backoffMs);
  };

  const deliver = (poller: Poller, text: string, value: unknown): void => {
    for (const subscriber of poller.subscribers) {
      subscriber.pending = { text, value };
      subscriber.wake?.();
    }
  };

  const stop = (poller: Poller): void => {
    poller.stopped = true;
    poller.timer?.cancel();
    poller.abort.abort();
    pollers.delete(poller.topic.id);
  };

  const endAll = (poller: Poller): void => {
    for (const subscriber of poller.subscribers) {
      subscriber.ended = true;
      subscriber.wake?.();
    }
  };

  const run = async (poller: Poller): Promise<void> => {
    poller.timer = null;
    let outcome: PollOutcome<unknown>;
    try {
      outcome = await poller.poll(poller.abort.signal);
    } catch {
      // Aborted: the last subscriber left. Anything else thrown (the poll function answers the
      // upstream's failures as results) is tried again at the next interval.
      if (!poller.stopped) poller.timer = setTimer(() => void run(poller), delayOf(poller, 0));
      return;
    }
    if (poller.stopped) return;
    poller.lastCalls = outcome.upstreamCalls;
    const text = JSON.stringify(outcome.result);
    if (poller.last === null || poller.last.text !== text) deliver(poller, text, outcome.result);
    poller.last = { text, value: outcome.result, final: outcome.final };
    if (outcome.endsKey) {
      for (const other of [...pollers.values()]) {
        if (other === poller || other.topic.key !== poller.topic.key) continue;
        deliver(other, text, outcome.result);
        stop(other);
        endAll(other);
      }
    }
    if (outcome.final) {
      stop(poller);
      endAll(poller);
      return;
    }
    poller.timer = setTimer(() => void run(poller), delayOf(poller, outcome.backoffMs ?? 0));
  };

  return {
    subscribe<T>(topic: Topic, poll: (signal: AbortSignal) => Promise<PollOutcome<T>>): LiveStream<T> {
      const subscriber: Subscriber = { pending: null, ended: false, wake: null };
      let poller = pollers.get(topic.id);
      if (poller) {
        poller.subscribers.add(subscriber);
        if (poller.last) subscriber.pending = { text: poller.last.text, value: poller.last.value };
      } else {
        poller = {
          topic,
          poll,
          subscribers: new Set([subscriber]),
          last: null,
          lastCalls: 0,
          abort: new AbortController(),
          timer: null,
          stopped: false,
        };
        pollers.set(topic.id, poller);
        void run(poller);
      }
      const own = poller;
      const leave = (): IteratorResult<T, undefined> => {
        subscriber.ended = true;
        subscriber.pending = null;
        own.subscribers.delete(subscriber);
        if (own.subscribers.size === 0 && !own.stopped) stop(own);
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
    streamsOf(key) {
      let streams = 0;
      for (const poller of pollers.values()) if (poller.topic.key === key) streams += poller.subscribers.size;
      return streams;
    },
    get pollers() {
      return pollers.size;
    },
    close() {
      for (const poller of [...pollers.values()]) {
        stop(poller);
        endAll(poller);
      }
    },
  };
}
