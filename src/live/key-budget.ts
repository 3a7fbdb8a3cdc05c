// The key's budget (LIVE_CALLS_PER_MIN) bounds one key's pollers together, so that opening and closing
// streams on new documents cannot make a key poll more:
// - every poll, a topic's first included, is counted in the key's calls of the last minute before it starts
//   (as many as its last poll made, one for a first; corrected once it is over); past the budget it is given
//   back and waits until its oldest counted call leaves the sliding window;
// - each poller waits at least its share of the minute for the calls its last poll made, so intervals
//   stretch as a key watches more documents.
// The calls are counted on the share (all gateways) when there is one, here otherwise or when it fails.

/** A key's calls over the window, the entry a spend made or changed, and when the oldest call leaves. */
export interface Spent {
  calls: number;
  /** For a later spend to change them (give back, or count what the poll made). */
  entry: string;
  /** The window's length when no call is counted. */
  oldestLeavesInMs: number;
}

export const WINDOW_MS = 60_000;

/** Each key's calls over the window, in this process. */
export function localLedger(now: () => number): (key: string, calls: number, entry?: string) => Spent {
  const keys = new Map<string, Map<string, { at: number; calls: number }>>();
  let made = 0;
  return (key, calls, entry) => {
    const at = now();
    const entries = keys.get(key) ?? new Map<string, { at: number; calls: number }>();
    const known = entry === undefined ? undefined : entries.get(entry);
    let name = entry ?? '';
    if (known) known.calls += calls;
    // An entry out of the window (or made by a share that failed since): what is added is recorded now.
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

export type Reservation = { granted: true; reserved: number; entry: string } | { granted: false; retryInMs: number };

export interface KeyBudgetOptions {
  callsPerMinute: number;
  /** No poller waits less. */
  intervalMs: number;
  now: () => number;
  /** None: counted here only. */
  sharedSpend: ((key: string, calls: number, entry?: string) => Promise<Spent>) | undefined;
  onShareError: (operation: string, error: unknown) => void;
}

export interface KeyBudget {
  reserve(key: string, lastCalls: number): Promise<Reservation>;
  /** Once the poll is over: `made` calls instead of the `reserved` ones. */
  settle(key: string, reserved: number, made: number, entry: string): void;
  /** Long enough that the key's pollers, each polling this often, stay within its calls a minute. */
  delayFor(keyCalls: number, backoffMs: number): number;
}

export function createKeyBudget(options: KeyBudgetOptions): KeyBudget {
  const { callsPerMinute, intervalMs, sharedSpend, onShareError } = options;
  const ledger = localLedger(options.now);
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
      void spend(key, -reserved, spent.entry);
      return { granted: false, retryInMs: spent.oldestLeavesInMs };
    },
    settle(key, reserved, made, entry) {
      if (made !== reserved) void spend(key, made - reserved, entry);
    },
    delayFor: (keyCalls, backoffMs) => Math.max(intervalMs, (keyCalls * 60_000) / callsPerMinute, backoffMs),
  };
}
