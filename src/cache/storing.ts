// What the read cache stores of a read, and when a stored record answers: fresh for its lifetime, then for
// an outage `maxStale` more; a request asking for fresher (a live poll) takes a `recent` one read recently enough.
import type { CacheRecord, CacheStore, CounterGuard } from './store.js';
import type { KeyMarks } from './marks.js';
import type { StoreCall } from './waiting.js';

/** A record of `value`, read from the upstream at `at`. */
export function recordOf(value: unknown, at: number, lifetimeMs: number, maxStaleMs: number): CacheRecord {
  return { value, freshUntil: at + lifetimeMs, staleUntil: at + lifetimeMs + maxStaleMs };
}

/** Whether `record` answers now; a record's read was at freshUntil less its lifetime. */
export function freshEnough(
  record: CacheRecord,
  at: number,
  entry: { lifetime: 'settled' | 'recent'; lifetimeMs: number },
  recentMaxAgeMs: number | undefined,
): boolean {
  return (
    record.freshUntil > at &&
    (recentMaxAgeMs === undefined || entry.lifetime === 'settled' || record.freshUntil - entry.lifetimeMs >= at - recentMaxAgeMs)
  );
}

/** Stores what a read brought, after the answer: once `owned` (if any) succeeded, and only under `guard`. */
export async function keep(
  store: CacheStore,
  safely: StoreCall,
  marks: Pick<KeyMarks, 'willHaveEntries'>,
  keyId: string,
  name: string,
  record: CacheRecord,
  guard: CounterGuard,
  owned?: () => Promise<unknown>,
): Promise<void> {
  if (owned !== undefined) {
    try {
      await owned();
    } catch {
      return;
    }
  }
  // Said before the record is there: what a 401 or a write must drop.
  await marks.willHaveEntries(keyId);
  await safely('set', () => store.set(name, record, guard));
}
