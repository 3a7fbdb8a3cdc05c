// A write against a read of the same object still storing its record, on a store whose calls land in the
// worst order (as on Redis, where another gateway's calls interleave): the record read before the write
// must not outlive it. The write moves the key's writes counter before it deletes the entry, so a record
// stored after the counter moved is refused by its guard, and one stored before is deleted.
import { describe, expect, it } from 'vitest';
import type { CacheRecord, CounterGuard } from '../../src/cache/store.js';
import { MemoryCacheStore } from '../../src/cache/memory-store.js';
import { createReadCache } from '../../src/cache/read-cache.js';

const KEY = 'Bearer race-key';

/** A memory store whose first SET of a website entry waits until an entry is deleted, and whose counters move late. */
class LateStore extends MemoryCacheStore {
  private readonly deleted = Promise.withResolvers<void>();
  private held = false;

  override async set(name: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean> {
    if (!this.held && name.includes('website')) {
      this.held = true;
      await this.deleted.promise; // lands right after the write's delete
    }
    return super.set(name, record, guard);
  }

  override async delete(name: string): Promise<void> {
    await super.delete(name);
    this.deleted.resolve();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }

  override async bump(name: string, lifetimeMs: number): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 20)); // another gateway's INCR, late on the wire
    return super.bump(name, lifetimeMs);
  }
}

describe('a write beside a read of the same object still storing its record', () => {
  it('leaves nothing from before the write to be read after it', async () => {
    let at = Date.parse('2026-03-15T12:00:00Z');
    const store = new LateStore(1024 * 1024, () => at);
    const cache = createReadCache({
      store,
      settledMs: 86_400_000,
      recentMs: 60_000,
      maxStaleMs: 600_000,
      keyRecheckMs: 60_000,
      now: () => at,
    });
    const entry = () => ({ kind: 'website', key: '1', lifetime: 'recent' as const, droppedByWrites: 'own' as const });
    // A read from before the write: its record's SET is held until the write's delete has happened.
    const before = cache.forRequest(KEY, async () => undefined);
    expect(await before.read(entry, async () => ({ domain: 'old.example' }))).toEqual({ domain: 'old.example' });
    // The write, from another request (another gateway, in effect).
    const writer = cache.forRequest(KEY, async () => undefined);
    writer.answered();
    await writer.written({ kind: 'website', key: '1' });
    await new Promise((resolve) => setTimeout(resolve, 50)); // every held call has landed
    at += 1_000;
    // A read after the write goes to the install.
    let fetched = 0;
    const after = cache.forRequest(KEY, async () => undefined);
    const value = await after.read(entry, async () => {
      fetched++;
      return { domain: 'new.example' };
    });
    expect(fetched).toBe(1);
    expect(value).toEqual({ domain: 'new.example' });
    await cache.close();
  });
});
