// What the read cache stores and when a record answers (upstream/cache-storing.ts), on a real memory
// store: freshness, a live poll's limit on `recent` records, the owner check, and the counters' guard.
import { describe, expect, it } from 'vitest';
import { KeyMarks } from '../../src/upstream/cache-marks.js';
import { MemoryCacheStore } from '../../src/upstream/cache-store.js';
import { freshEnough, keep, recordOf } from '../../src/upstream/cache-storing.js';
import { safeStore } from '../../src/upstream/cache-waiting.js';
import { storeNames } from '../../src/upstream/keys.js';

describe('freshEnough', () => {
  const record = recordOf('v', 1_000, 60_000, 600_000);
  const recent = { lifetime: 'recent' as const, lifetimeMs: 60_000 };

  it('answers within its lifetime; past it, not (stale is the failure path’s)', () => {
    expect(record).toEqual({ value: 'v', freshUntil: 61_000, staleUntil: 661_000 });
    expect(freshEnough(record, 60_999, recent, undefined)).toBe(true);
    expect(freshEnough(record, 61_000, recent, undefined)).toBe(false);
  });

  it('gives a request asking for fresher a `recent` record only if read within that, a `settled` one always', () => {
    expect(freshEnough(record, 5_000, recent, 4_000)).toBe(true);
    expect(freshEnough(record, 5_001, recent, 4_000)).toBe(false);
    expect(freshEnough(record, 5_001, { lifetime: 'settled', lifetimeMs: 60_000 }, 4_000)).toBe(true);
  });
});

describe('keep', () => {
  const setup = () => {
    const store = new MemoryCacheStore(100_000);
    const safely = safeStore(undefined);
    return { store, safely, marks: new KeyMarks(store, safely, 1_000, 10_000) };
  };
  const record = recordOf({ n: 1 }, Date.now(), 60_000, 0);

  it('stores once the owner check succeeded, marking that the key has entries', async () => {
    const { store, safely, marks } = setup();
    await keep(store, safely, marks, 'id', 'e', record, {}, async () => undefined);
    expect((await store.get('e'))?.value).toEqual({ n: 1 });
    expect(await marks.mayHaveEntries('id')).toBe(true);
  });

  it('stores nothing when the owner check fails, or when a counter moved since the read', async () => {
    const { store, safely, marks } = setup();
    await keep(store, safely, marks, 'id', 'e', record, {}, () => Promise.reject(new Error('not yours')));
    expect(await store.get('e')).toBeUndefined();
    expect(await marks.mayHaveEntries('id')).toBe(false);
    const guard = { [storeNames.writes('id')]: await store.counter(storeNames.writes('id')) };
    await store.bump(storeNames.writes('id'), 60_000); // a write landed meanwhile
    await keep(store, safely, marks, 'id', 'e', record, guard);
    expect(await store.get('e')).toBeUndefined();
  });
});
