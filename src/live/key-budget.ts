// The key's budget (LIVE_CALLS_PER_MIN): one key's pollers together make at most that many upstream calls a
// minute. Two rules bound them:
// - every poll, a topic's first included, counts in the key's calls of the last minute before it starts (as
//   many as its last poll made, one for a first; corrected once it is over): past the budget it is given
//   back and waits until its oldest counted call is more than a minute old (a sliding window: no 60 s
//   holds more than the budget);
// - each poller waits at least its share of the minute for the calls its last poll made, so intervals
//   stretch as a key watches more documents.
// The calls of the last minute are counted on the share (all gateways) when there is one, here otherwise
// or when the share fails.

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

/** A poll's place in the key's budget: counted (`reserved` calls), or refused until `retryInMs` has passed. */
export type Reservation = { granted: true; reserved: number; entry: string } | { granted: false; retryInMs: number };

export interface KeyBudgetOptions {
  callsPerMinute: number;
  /** The interval aimed for between two polls of a topic: no poller waits less. */
  intervalMs: number;
  now: () => number;
  /** The key's calls of the last minute on the share, `calls` added; none: counted here only. */
  sharedSpend: ((key: string, calls: number, entry?: string) => Promise<Spent>) | undefined;
  onShareError: (operation: string, error: unknown) => void;
}

export interface KeyBudget {
  /** Counts a poll before it starts: as many calls as its last poll made, one for a first. */
  reserve(key: string, lastCalls: number): Promise<Reservation>;
  /** Corrects a poll's count once it is over: `made` calls instead of the `reserved` ones (its reservation's entry). */
  settle(key: string, reserved: number, made: number, entry: string): void;
  /** The wait before a poller's next poll: long enough that the key's pollers, each polling this often, stay within its calls a minute. */
  delayFor(keyCalls: number, backoffMs: number): number;
}

export function createKeyBudget(options: KeyBudgetOptions): KeyBudget {
  const { callsPerMinute, intervalMs, sharedSpend, onShareError } = options;
  const ledger = localLedger(options.now);
  /** The key's calls of the last minute, with `calls` added: on the share (all gateways) when there is one. */
  const spend = async (key: string, calls: number, entry?: string): Promise<Spent> => {
    if (!sharedSpend) return ledger(key, calls, entry);
    try {
      return await sharedSpend(key, calls, entry);
    } catch (error) {
      onShareError('live budget', error);
      return ledger(key, calls, entry);
    }
  };
  return {
    async reserve(key, lastCalls) {
      const reserved = Math.max(1, lastCalls);
      const spent = await spend(key, reserved);
      // A poll alone past the budget still runs: a key's budget never stops it for good.
      if (spent.calls <= callsPerMinute || spent.calls <= reserved) return { granted: true, reserved, entry: spent.entry };
      // Given back, and tried again once the oldest call counted has left the window.
      void spend(key, -reserved, spent.entry);
      return { granted: false, retryInMs: spent.oldestLeavesInMs };
    },
    settle(key, reserved, made, entry) {
      if (made !== reserved) void spend(key, made - reserved, entry);
    },
    delayFor: (keyCalls, backoffMs) => Math.max(intervalMs, (keyCalls * 60_000) / callsPerMinute, backoffMs),
  };
}
