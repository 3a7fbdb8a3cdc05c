// The key's marks in the read cache (cache/marks.ts), on a real memory store: `seen` for its
// lifetime, and a revocation that moves the generation on only for a key that may have entries.
import { describe, expect, it } from 'vitest';
import { KeyMarks } from '../../src/cache/marks.js';
import { MemoryCacheStore } from '../../src/cache/memory-store.js';
import { createReadCache } from '../../src/cache/read-cache.js';
import { safeStore } from '../../src/cache/waiting.js';
import { storeNames } from '../../src/cache/keys.js';

describe('KeyMarks', () => {
  it('holds a `seen` mark for KEY_RECHECK_S', async () => {
    let at = 0;
    const store = new MemoryCacheStore(100_000, () => at);
    const safely = safeStore(undefined);
    const marks = new KeyMarks(store, safely, 1_000, 10_000);
    expect(await marks.wasSeen('id', safely)).toBe(false);
    await marks.seen('id');
    expect(await marks.wasSeen('id', safely)).toBe(true);
    at = 1_000;
    expect(await marks.wasSeen('id', safely)).toBe(false);
  });

  it('drops a revoked key’s entries (its generation moves on) only if it may have some', async () => {
    const store = new MemoryCacheStore(100_000);
    const marks = new KeyMarks(store, safeStore(undefined), 1_000, 10_000);
    await marks.dropEntriesOf('id');
    expect(await store.counter(storeNames.generation('id'))).toBe(0);
    await marks.willHaveEntries('id');
    expect(await marks.mayHaveEntries('id')).toBe(true);
    await marks.dropEntriesOf('id');
    expect(await store.counter(storeNames.generation('id'))).toBe(1);
  });

  it('answers a failing store as no seen mark and an unknown entries mark, telling what failed', async () => {
    const errors: string[] = [];
    const store = Object.assign(new MemoryCacheStore(100_000), { marked: () => Promise.reject(new Error('down')) });
    const safely = safeStore((operation) => void errors.push(operation));
    const marks = new KeyMarks(store, safely, 1_000, 10_000);
    expect(await marks.mayHaveEntries('id')).toBeUndefined();
    expect(await marks.wasSeen('id', safely)).toBe(false);
    expect(errors).toEqual(['marked', 'marked']);
  });

  it('are set once by a request, however many reads it stores', async () => {
    const marked: string[] = [];
    class CountingStore extends MemoryCacheStore {
      override async mark(name: string, ttlMs: number): Promise<void> {
        marked.push(name.split(':')[0] as string);
        return super.mark(name, ttlMs);
      }
    }
    const store = new CountingStore(1024 * 1024);
    const cache = createReadCache({ store, settledMs: 86_400_000, recentMs: 60_000, maxStaleMs: 600_000, keyRecheckMs: 60_000 });
    const request = cache.forRequest('Bearer many-reads', async () => undefined);
    const reads = ['1', '2', '3', '4'].map((key) =>
      request.read(
        () => ({ kind: 'website', key, lifetime: 'recent' as const, droppedByWrites: 'own' as const }),
        async () => ({ id: key }),
      ),
    );
    expect(await Promise.all(reads)).toEqual([{ id: '1' }, { id: '2' }, { id: '3' }, { id: '4' }]);
    request.answered();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the records and marks are stored after the answers
    expect(marked.sort()).toEqual(['has', 'seen']);
    // Each entry stored all the same: a second request reads none of them upstream.
    const again = cache.forRequest('Bearer many-reads', async () => undefined);
    const fetch = async () => {
      throw new Error('read upstream');
    };
    for (const key of ['1', '2', '3', '4']) {
      expect(
        await again.read(() => ({ kind: 'website', key, lifetime: 'recent' as const, droppedByWrites: 'own' as const }), fetch),
      ).toEqual({ id: key });
    }
    await cache.close();
  });
});
