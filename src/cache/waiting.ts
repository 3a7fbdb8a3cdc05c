// How the read cache waits, on the store and on calls other requests make: a failed store call is a miss,
// and each request waits for the store at most its budget (CACHE_STORE_TIMEOUT_MS) in all. Concurrent requests
// join one call in flight; one cancelled because its request went away is made again by who joined it.

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

/** What a request has spent of its store budget: the time it waited on the store, and whether it ran out. */
export interface BudgetUse {
  usedMs: number;
  spent: boolean;
}

export type BudgetedCall = StoreCall & { use(): BudgetUse };

/**
 * Store calls of one request, which together wait at most `budgetMs` less what `before` spent; undefined past it.
 * Only the time one of them is unanswered counts: a sick store costs a request one budget, not one a step.
 */
export function withinBudget(safely: StoreCall, budgetMs: number | undefined, before?: BudgetUse): BudgetedCall {
  const budget = (budgetMs ?? Number.POSITIVE_INFINITY) - (before?.usedMs ?? 0);
  // Real time, not the cache's `now` (which tests pin): the budget is about waiting.
  let waitedMs = 0;
  let unanswered = 0;
  let waitingSince = 0;
  const waited = (): number => waitedMs + (unanswered > 0 ? performance.now() - waitingSince : 0);
  // Set when a call's timer ran out: timers can fire a fraction of a millisecond early.
  let spent = before?.spent ?? false;
  const call = <T>(operation: string, call: () => Promise<T>): Promise<T | undefined> => {
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
        // After what had arrived was read: on a busy loop the timer may come due in the same turn as the answer.
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

/** The call in flight under `name`, joined, or `make`'s, told whether it is still the one there (a write may drop it). */
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

  add(error: unknown): void {
    if (typeof error === 'object' && error !== null) this.errors.add(error);
  }

  has(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.errors.has(error);
  }
}
