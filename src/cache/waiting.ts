// How the read cache waits, on the store and on calls other requests make. A store that fails or is slow
// never fails a request: a failed store call is a miss, and each request waits for the store at most its
// budget (CACHE_STORE_TIMEOUT_MS) in all, counted while a store call of its is unanswered (never while
// it waits on the upstream). Concurrent requests join one call in flight (an upstream read,
// a key's re-check) rather than make their own; one cancelled because the request that made it went
// away says nothing of the upstream, and who joined it makes it again.

/** A store call answered as undefined (a miss) when the store fails or is too slow. */
export type StoreCall = <T>(operation: string, call: () => Promise<T>) => Promise<T | undefined>;

/** Store calls that cannot fail the request: a failure is told to `onError` and answered as undefined. */
export function safeStore(onError: ((operation: string, error: unknown) => void) | undefined): StoreCall {
  return async (operation, call) => {
    try {
      return await call();
    } catch (error) {
      onError?.(operation, error);
      return undefined;
    }
  };
}

/** What a request has spent of its store budget so far: the time it waited on the store, and whether a call ran it out. */
export interface BudgetUse {
  usedMs: number;
  spent: boolean;
}

/** Store calls within a budget, and what they spent of it. */
export type BudgetedCall = StoreCall & { use(): BudgetUse };

/**
 * Store calls of one request, which together wait on the store at most `budgetMs` (none: no bound),
 * less what `before` spent of it (the stored answers' lookup, in front of GraphQL); undefined past it.
 * What counts is the time the request waits on the store: while at least one of its store calls is
 * unanswered (calls that overlap count once). The time the upstream takes to answer counts for nothing,
 * so a request whose install answers slowly still reads and drops through the store; a sick store
 * costs a request at most `budgetMs` in all, however many steps it has, not that much each.
 */
export function withinBudget(safely: StoreCall, budgetMs: number | undefined, before?: BudgetUse): BudgetedCall {
  const budget = (budgetMs ?? Number.POSITIVE_INFINITY) - (before?.usedMs ?? 0);
  // Real time, not the cache's `now` (which tests pin): the budget is about waiting.
  /** Time waited on the store by calls that are over; the calls unanswered, and since when one was. */
  let waitedMs = 0;
  let unanswered = 0;
  let waitingSince = 0;
  const waited = (): number => waitedMs + (unanswered > 0 ? performance.now() - waitingSince : 0);
  // Set when a call's timer ran out: node's timers can fire a fraction of a millisecond before the budget's end.
  let spent = before?.spent ?? false;
  const call = <T>(operation: string, call: () => Promise<T>): Promise<T | undefined> => {
    // While any call is unanswered the waited time runs as the clock does: this call's share ends
    // when the budget does, whichever of the others end before it.
    const remaining = budget - waited();
    if (spent || remaining <= 0) return Promise.resolve(undefined);
    if (!Number.isFinite(remaining)) return safely(operation, call);
    if (unanswered++ === 0) waitingSince = performance.now();
    const answered = (): void => {
      if (--unanswered === 0) waitedMs += performance.now() - waitingSince;
    };
    return safely(operation, async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        // Given up only once what had arrived was read (setImmediate runs after the poll phase): on a
        // busy event loop the timer can come due in the same turn as the store's answer, and timers run first.
        timer = setTimeout(
          () =>
            setImmediate(() => {
              spent = true;
              reject(new Error(`the store took longer than this request's ${budgetMs} ms`));
            }),
          remaining,
        );
      });
      try {
        return await Promise.race([call(), late]);
      } finally {
        clearTimeout(timer);
        answered();
      }
    });
  };
  return Object.assign(call, { use: (): BudgetUse => ({ usedMs: (before?.usedMs ?? 0) + waited(), spent }) });
}

/**
 * The call in flight under `name` in `calls`, joined, or `make`'s, made and put there until it is over.
 * `make` is told whether its call is still the one under `name` (a write may have dropped it).
 */
export function joinOrMake<V>(
  calls: Map<string, Promise<V>>,
  name: string,
  make: (current: () => boolean) => Promise<V>,
): { call: Promise<V>; joined: boolean } {
  const known = calls.get(name);
  if (known !== undefined) return { call: known, joined: true };
  let own: Promise<V> | undefined;
  const current = (): boolean => calls.get(name) === own;
  own = make(current).finally(() => {
    if (current()) calls.delete(name);
  });
  calls.set(name, own);
  return { call: own, joined: false };
}

/** Failures of shared calls cancelled because the request that made them went away. */
export class Abandoned {
  private readonly errors = new WeakSet<object>();

  /** `error` ended a call whose request went away: those that joined it make it again. */
  add(error: unknown): void {
    if (typeof error === 'object' && error !== null) this.errors.add(error);
  }

  has(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.errors.has(error);
  }
}
