// The key's budget (LIVE_CALLS_PER_MIN): one key's pollers together make at most that many upstream calls a
// minute. Two rules bound them:
// - every poll, a topic's first included, counts in the key's calls of the last minute before it starts (as
//   many as its last poll made, one for a first; corrected once it is over): past the budget it is given
//   back and waits for the minute to move on;
// - each poller waits at least its share of the minute for the calls its last poll made, so intervals
//   stretch as a key watches more documents.
// The calls of the last minute are counted on the share (all gateways) when there is one, here otherwise
// or when the share fails.

/** A key's calls over the last minute (BUCKET_MS buckets), and when the oldest bucket leaves it. */
export interface Spent {
  calls: number;
  nextBucketInMs: number;
}

/** The key's calls are counted over a minute, in buckets of this many milliseconds. */
export const BUCKET_MS = 10_000;
export const MINUTE_BUCKETS = 6;

/** The calls of each key over the last minute, in this process (without a share, or when it fails). */
export function localLedger(now: () => number): (key: string, calls: number) => Spent {
  const keys = new Map<string, Map<number, number>>();
  return (key, calls) => {
    const at = now();
    const current = Math.floor(at / BUCKET_MS);
    const buckets = keys.get(key) ?? new Map<number, number>();
    buckets.set(current, (buckets.get(current) ?? 0) + calls);
    let total = 0;
    for (const [bucket, spent] of buckets) {
      if (bucket <= current - MINUTE_BUCKETS) buckets.delete(bucket);
      else total += spent;
    }
    if (total <= 0 && buckets.size === 1 && (buckets.get(current) ?? 0) <= 0) keys.delete(key);
    else keys.set(key, buckets);
    return { calls: total, nextBucketInMs: (current + 1) * BUCKET_MS - at };
  };
}

/** A poll's place in the key's budget: counted (`reserved` calls), or refused until `retryInMs` has passed. */
export type Reservation = { granted: true; reserved: number } | { granted: false; retryInMs: number };

export interface KeyBudgetOptions {
  callsPerMinute: number;
  /** The interval aimed for between two polls of a topic: no poller waits less. */
  intervalMs: number;
  now: () => number;
  /** The key's calls of the last minute on the share, `calls` added; none: counted here only. */
  sharedSpend: ((key: string, calls: number) => Promise<Spent>) | undefined;
  onShareError: (operation: string, error: unknown) => void;
}

export interface KeyBudget {
  /** Counts a poll before it starts: as many calls as its last poll made, one for a first. */
  reserve(key: string, lastCalls: number): Promise<Reservation>;
  /** Corrects a poll's count once it is over: `made` calls instead of the `reserved` ones. */
  settle(key: string, reserved: number, made: number): void;
  /** The wait before a poller's next poll: long enough that the key's pollers, each polling this often, stay within its calls a minute. */
  delayFor(keyCalls: number, backoffMs: number): number;
}

export function createKeyBudget(options: KeyBudgetOptions): KeyBudget {
  const { callsPerMinute, intervalMs, sharedSpend, onShareError } = options;
  const ledger = localLedger(options.now);
  /** The key's calls of the last minute, with `calls` added: on the share (all gateways) when there is one. */
  const spend = async (key: string, calls: number): Promise<Spent> => {
    if (!sharedSpend) return ledger(key, calls);
    try {
      return await sharedSpend(key, calls);
    } catch (error) {
      onShareError('live budget', error);
      return ledger(key, calls);
    }
  };
  return {
    async reserve(key, lastCalls) {
      const reserved = Math.max(1, lastCalls);
      const spent = await spend(key, reserved);
      // A poll alone past the budget still runs: a key's budget never stops it for good.
      if (spent.calls <= callsPerMinute || spent.calls <= reserved) return { granted: true, reserved };
      void spend(key, -reserved);
      return { granted: false, retryInMs: spent.nextBucketInMs };
    },
    settle(key, reserved, made) {
      if (made !== reserved) void spend(key, made - reserved);
    },
    delayFor: (keyCalls, backoffMs) => Math.max(intervalMs, (keyCalls * 60_000) / callsPerMinute, backoffMs),
  };
}
