// How the read cache waits, on the store and on calls other requests make. A store that fails or is slow
// never fails a request: a failed store call is a miss, and each request waits for the store at most its
// budget (CACHE_STORE_TIMEOUT_MS) in all. Concurrent requests join one call in flight (an upstream read,
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

/** What a request has spent of its store budget so far: the time, and whether a call ran it out. */
export interface BudgetUse {
  usedMs: number;
  spent: boolean;
}

/** Store calls within a budget, and what they spent of it. */
export type BudgetedCall = StoreCall & { use(): BudgetUse };

/**
 * Store calls of one request, within `budgetMs` in all (none: no bound), less what `before` spent of it
 * (the stored answers' lookup, in front of GraphQL); undefined past it.
 */
export function withinBudget(safely: StoreCall, budgetMs: number | undefined, before?: BudgetUse): BudgetedCall {
  // Real time, not the cache's `now` (which tests pin): the budget is about waiting.
  const startedAt = performance.now();
  const usedBefore = before?.usedMs ?? 0;
  const budgetEnd = startedAt + (budgetMs ?? Number.POSITIVE_INFINITY) - usedBefore;
  // Set when a call's timer ran out: node's timers can fire a fraction of a millisecond before budgetEnd.
  let spent = before?.spent ?? false;
  const call = <T>(operation: string, call: () => Promise<T>): Promise<T | undefined> => {
    const remaining = budgetEnd - performance.now();
    if (spent || remaining <= 0) return Promise.resolve(undefined);
    if (!Number.isFinite(remaining)) return safely(operation, call);
    return safely(operation, () => {
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
      return Promise.race([call(), late]).finally(() => clearTimeout(timer));
    });
  };
  return Object.assign(call, { use: (): BudgetUse => ({ usedMs: usedBefore + performance.now() - startedAt, spent }) });
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
