// What the read cache stores of a read, and when a stored record answers. A record is fresh for its
// lifetime, then may answer an outage for `maxStale` more; a request that asks for fresher (a live poll)
// takes a `recent` record only if it was read from the upstream recently enough. A record is stored after
// the answer, once its owner check (if any) succeeded, and only while the counters its request read stand.
import type { CacheRecord, CacheStore, CounterGuard } from './store.js';
import type { KeyMarks } from './marks.js';
import type { StoreCall } from './waiting.js';

/** A record of `value`, read from the upstream at `at`. */
export function recordOf(value: unknown, at: number, lifetimeMs: number, maxStaleMs: number): CacheRecord {
  return { value, freshUntil: at + lifetimeMs, staleUntil: at + lifetimeMs + maxStaleMs };
}

/**
 * Whether `record` answers now: within its lifetime and, for a request that asks it (`recentMaxAgeMs`),
 * a record that may change read from the upstream within that (a record's read was at freshUntil − its lifetime).
 */
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

/**
 * Stores what a read brought, after the answer (which does not wait for the store): once `owned` (if any)
 * succeeded, and only if no write or revocation moved the guard's counters since the request read them
 * (checked in the store itself, whichever gateway wrote).
 */
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
  // Said before the record is there: what a 401 or a write must drop, for as long as any record can live.
  await marks.willHaveEntries(keyId);
  await safely('set', () => store.set(name, record, guard));
}
