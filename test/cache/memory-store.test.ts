// MemoryCacheStore on its own: an LRU bounded by what its records cost in V8's heap (each held as its
// JSON text), records gone past their stale lifetime, sets guarded by counters, counters, marks with a
// lifetime, and a per-process secret.
// (The Redis store has its own suite: test/cache/redis-store.redis.test.ts.)
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { CacheRecord } from '../../src/cache/store.js';
import { MemoryCacheStore } from '../../src/cache/memory-store.js';

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-03-15T12:00:00Z')): { now: () => number; advance(ms: number): void } {
  let at = start;
  return {
    now: () => at,
    advance: (ms) => {
      at += ms;
    },
  };
}

const T0 = Date.parse('2026-03-15T12:00:00Z');

/** A record fresh for `freshMs` and usable stale for `staleMs` more, from T0. */
const recordOf = (value: unknown, freshMs = 60_000, staleMs = 600_000): CacheRecord => ({
  value,
  freshUntil: T0 + freshMs,
  staleUntil: T0 + freshMs + staleMs,
});

/** The bytes a record costs besides its key and text: its objects and its entry in the map. */
const OVERHEAD = 200;

/**
 * What the store counts for a record: its key, its value's JSON text as V8 holds it (a byte a
 * character, two when any is beyond Latin-1), and the overhead.
 */
function costOf(key: string, value: unknown): number {
  const text = JSON.stringify(value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is Latin-1 from its first character, U+0000.
  return key.length + (/[^\u0000-\u00ff]/.test(text) ? 2 : 1) * text.length + OVERHEAD;
}

/** A value whose record costs exactly `bytes` under `key`. */
function valueCosting(key: string, bytes: number): string {
  const padding = bytes - key.length - OVERHEAD - 2; // the JSON string's quotes
  if (padding < 0) throw new Error(`${bytes} bytes is too small for key ${key}`);
  return 'x'.repeat(padding);
}

describe('MemoryCacheStore: records', () => {
  it('gives back what was set, and nothing for an unknown key', async () => {
    const clock = manualClock();
    const store = new MemoryCacheStore(10_000, clock.now);
    const record = recordOf({ id: '1', domain: 'example.com' });
    await store.set('a', record);
    expect(await store.get('a')).toEqual(record);
    expect(await store.get('b')).toBeUndefined();
    expect(store.size).toEqual({ entries: 1, bytes: costOf('a', record.value) });
  });

  it('keeps a record past its fresh lifetime (to answer stale) and drops it at its stale lifetime', async () => {
    const clock = manualClock();
    const store = new MemoryCacheStore(10_000, clock.now);
    await store.set('a', recordOf('v', 1_000, 5_000));
    clock.advance(1_001);
    expect((await store.get('a'))?.value).toBe('v'); // past freshUntil: the cache decides what it means
    clock.advance(5_000 - 1 - 1); // 1 ms before staleUntil
    expect((await store.get('a'))?.value).toBe('v');
    clock.advance(1); // at staleUntil
    expect(await store.get('a')).toBeUndefined();
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('replaces a record set again under the same key, counting its bytes once', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await store.set('a', recordOf('short'));
    await store.set('a', recordOf('a much longer value'));
    expect((await store.get('a'))?.value).toBe('a much longer value');
    expect(store.size).toEqual({ entries: 1, bytes: costOf('a', 'a much longer value') });
  });

  it('deletes a record (and deleting an unknown key does nothing)', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await store.set('a', recordOf('v'));
    await store.set('b', recordOf('w'));
    await store.delete('a');
    await store.delete('nothing');
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('b'))?.value).toBe('w');
    expect(store.size).toEqual({ entries: 1, bytes: costOf('b', 'w') });
  });

  it('close() empties it', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await store.set('a', recordOf('v'));
    await store.close();
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
    expect(await store.get('a')).toBeUndefined();
  });
});

describe('MemoryCacheStore: look', () => {
  it('a record, counters and marks at once, as get, counter and marked give them', async () => {
    const clock = manualClock();
    const store = new MemoryCacheStore(10_000, clock.now);
    const record = recordOf({ body: 'stored' });
    await store.set('r', record);
    await store.bump('c', 60_000);
    await store.mark('m', 1_000);
    expect(await store.look('r', ['c', 'unset'], ['m', 'unmarked'])).toEqual({ record, counters: [1, 0], marks: [true, false] });
    clock.advance(1_000);
    expect(await store.look('none', ['c'], ['m'])).toEqual({ record: undefined, counters: [1], marks: [false] });
  });
});

describe('MemoryCacheStore: records held as text', () => {
  it('a hit gets a value of its own: changing it changes nothing held', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await store.set('a', recordOf({ nodes: [{ value: 'x', count: 1 }] }));
    const first = (await store.get('a'))?.value as { nodes: { value: string; count: number }[] };
    first.nodes[0]!.count = 99;
    first.nodes.push({ value: 'y', count: 2 });
    expect((await store.get('a'))?.value).toEqual({ nodes: [{ value: 'x', count: 1 }] });
  });

  it('a text with characters beyond Latin-1 counts two bytes a character (as V8 holds it); Latin-1 one', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    const latin1 = { value: '/café-déjà-vu' };
    const wide = { value: '/日本語のページ' };
    await store.set('latin1', recordOf(latin1));
    expect(store.size.bytes).toBe('latin1'.length + JSON.stringify(latin1).length + OVERHEAD);
    await store.set('wide', recordOf(wide));
    expect(store.size.bytes).toBe(costOf('latin1', latin1) + 'wide'.length + 2 * JSON.stringify(wide).length + OVERHEAD);
  });
});

describe("MemoryCacheStore: a record's bytes", () => {
  it('are held in a buffer of their own, counted byte for byte beside the value, and given back as they are', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    const given = Buffer.from('{"data":{"page":"/café"}}');
    const value = { headers: ['vary', 'Origin'], generation: 0 };
    const record: CacheRecord = { ...recordOf(value), bytes: given };
    await store.set('a', record);
    // The value held decoded: counted as twice its JSON text.
    expect(store.size).toEqual({ entries: 1, bytes: 'a'.length + 2 * JSON.stringify(value).length + OVERHEAD + given.byteLength });
    given.fill(0); // the caller's buffer changes: what is held does not
    value.headers.push('etag', 'W/"x"'); // nor when the caller's value does
    const found = await store.get('a');
    expect(Buffer.from(found?.bytes ?? [])).toEqual(Buffer.from('{"data":{"page":"/café"}}'));
    expect(found?.value).toEqual({ headers: ['vary', 'Origin'], generation: 0 });
    // Decoded once and frozen all through: every hit gets it as it is held, and cannot change it.
    expect((await store.get('a'))?.value).toBe(found?.value);
    const held = found?.value as typeof value;
    expect(Object.isFrozen(held) && Object.isFrozen(held.headers)).toBe(true);
    expect(() => held.headers.push('x')).toThrow(TypeError);
    // Not a slice of node's shared pool of small buffers, which would keep the whole pool alive.
    expect(found?.bytes?.buffer.byteLength).toBe(found?.bytes?.byteLength);
    expect(store.lookNow('a', ['c'], ['m'])).toEqual(await store.look('a', ['c'], ['m']));
    // Counted within the bound: bytes that would pass it are not stored.
    expect(await store.set('big', { ...recordOf('v'), bytes: Buffer.alloc(10_000) })).toBe(false);
    await store.delete('a');
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });
});

describe('MemoryCacheStore: sets guarded by counters', () => {
  it('stores only while every counter of the guard still has its value (unset counts 0)', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await store.bump('gen:k', 60_000);
    expect(await store.set('a', recordOf('v1'), { 'gen:k': 1, 'lists:k': 0 })).toBe(true);
    expect((await store.get('a'))?.value).toBe('v1');
    await store.bump('lists:k', 60_000); // a write: what was read before it is not stored after it
    expect(await store.set('a', recordOf('v2'), { 'gen:k': 1, 'lists:k': 0 })).toBe(false);
    expect((await store.get('a'))?.value).toBe('v1');
    expect(store.size).toEqual({ entries: 1, bytes: costOf('a', 'v1') });
    expect(await store.set('a', recordOf('v3'), { 'gen:k': 1, 'lists:k': 1 })).toBe(true);
    expect((await store.get('a'))?.value).toBe('v3');
    expect(await store.set('b', recordOf('w'))).toBe(true); // no guard: stored
  });
});

describe('MemoryCacheStore: bounded by bytes, least recently used first', () => {
  it('evicts the oldest records once the bound is passed, and never holds more than the bound', async () => {
    const store = new MemoryCacheStore(1_000, manualClock().now);
    for (const key of ['k1', 'k2', 'k3']) await store.set(key, recordOf(valueCosting(key, 300)));
    expect(store.size).toEqual({ entries: 3, bytes: 900 });
    await store.set('k4', recordOf(valueCosting('k4', 300))); // 1200 > 1000: k1 goes
    expect(store.size).toEqual({ entries: 3, bytes: 900 });
    expect(await store.get('k1')).toBeUndefined();
    for (const key of ['k2', 'k3', 'k4']) expect(await store.get(key), key).toBeDefined();
    // A big one pushes out as many as it needs.
    await store.set('big', recordOf(valueCosting('big', 650)));
    expect(store.size.bytes).toBeLessThanOrEqual(1_000);
    expect(store.size).toEqual({ entries: 2, bytes: 950 });
    expect(await store.get('k2')).toBeUndefined();
    expect(await store.get('k3')).toBeUndefined();
    expect(await store.get('k4')).toBeDefined();
    expect(await store.get('big')).toBeDefined();
  });

  it('a read makes a record the most recently used: the least recently read goes first', async () => {
    const store = new MemoryCacheStore(1_000, manualClock().now);
    for (const key of ['k1', 'k2', 'k3']) await store.set(key, recordOf(valueCosting(key, 300)));
    await store.get('k1'); // k2 is now the least recently used
    await store.set('k4', recordOf(valueCosting('k4', 300)));
    expect(await store.get('k2')).toBeUndefined();
    expect(await store.get('k1')).toBeDefined();
    expect(await store.get('k3')).toBeDefined();
    expect(await store.get('k4')).toBeDefined();
  });

  it('a record as large as the bound fits; one larger is not stored and evicts nothing', async () => {
    const store = new MemoryCacheStore(1_000, manualClock().now);
    await store.set('small', recordOf(valueCosting('small', 300)));
    expect(await store.set('huge', recordOf(valueCosting('huge', 1_001)))).toBe(false);
    expect(await store.get('huge')).toBeUndefined();
    expect(store.size).toEqual({ entries: 1, bytes: 300 });
    expect(await store.set('exact', recordOf(valueCosting('exact', 1_000)))).toBe(true);
    expect(store.size).toEqual({ entries: 1, bytes: 1_000 });
    expect(await store.get('exact')).toBeDefined();
  });

  it('setting a key again with a larger value can evict others but never itself', async () => {
    const store = new MemoryCacheStore(1_000, manualClock().now);
    await store.set('a', recordOf(valueCosting('a', 300)));
    await store.set('b', recordOf(valueCosting('b', 300)));
    await store.set('a', recordOf(valueCosting('a', 800))); // a is re-inserted last: b goes
    expect(store.size).toEqual({ entries: 1, bytes: 800 });
    expect(await store.get('a')).toBeDefined();
  });

  it('concurrent sets of one key count its bytes once (the count stays the sum of what is held)', async () => {
    const store = new MemoryCacheStore(10_000, manualClock().now);
    await Promise.all([store.set('a', recordOf('first')), store.set('a', recordOf('second value')), store.set('b', recordOf('b'))]);
    expect((await store.get('a'))?.value).toBe('second value');
    expect(store.size).toEqual({ entries: 2, bytes: costOf('a', 'second value') + costOf('b', 'b') });
    await Promise.all([store.delete('a'), store.set('a', recordOf('third'))]);
    expect(store.size).toEqual({ entries: 2, bytes: costOf('a', 'third') + costOf('b', 'b') });
    await store.delete('a');
    await store.delete('b');
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('CACHE_MAX_BYTES=0 keeps nothing', async () => {
    const store = new MemoryCacheStore(0, manualClock().now);
    await store.set('a', recordOf('v'));
    expect(await store.get('a')).toBeUndefined();
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('keeps its byte count exact and under the bound through a long mixed run (sets, reads, deletes, expiries)', async () => {
    const clock = manualClock();
    const store = new MemoryCacheStore(2_000, clock.now);
    for (let i = 0; i < 500; i++) {
      const key = `key-${i % 37}`;
      if (i % 7 === 3) {
        await store.delete(key);
      } else if (i % 5 === 0) {
        await store.get(key);
      } else {
        // Every third record is short-lived, so that some expire and are dropped as they are read.
        const lifetime = i % 3 === 0 ? 50 : 3_600_000;
        const at = clock.now();
        await store.set(key, { value: 'v'.repeat((i * 31) % 400), freshUntil: at + lifetime, staleUntil: at + 2 * lifetime });
      }
      clock.advance(13);
      expect(store.size.bytes).toBeLessThanOrEqual(2_000);
    }
    // The count is the sum of what is held: reading every key back drops the expired ones (and their
    // bytes), and what is left must add up to the count.
    let entries = 0;
    let sum = 0;
    for (let k = 0; k < 37; k++) {
      const key = `key-${k}`;
      const record = await store.get(key);
      if (record !== undefined) {
        entries++;
        sum += costOf(key, record.value);
      }
    }
    expect(entries).toBeGreaterThan(0);
    expect(store.size).toEqual({ entries, bytes: sum });
  });
});

describe('MemoryCacheStore: counters, marks and the secret', () => {
  it('counters start at 0 and bump by one, each on its own', async () => {
    const store = new MemoryCacheStore(1_000, manualClock().now);
    expect(await store.counter('gen:a')).toBe(0);
    expect(await store.bump('gen:a', 60_000)).toBe(1);
    expect(await store.bump('gen:a', 60_000)).toBe(2);
    expect(await store.counter('gen:a')).toBe(2);
    expect(await store.counter('gen:b')).toBe(0);
  });

  it('a mark holds for its lifetime and no longer', async () => {
    const clock = manualClock();
    const store = new MemoryCacheStore(1_000, clock.now);
    expect(await store.marked('seen:a')).toBe(false);
    await store.mark('seen:a', 10_000);
    clock.advance(9_999);
    expect(await store.marked('seen:a')).toBe(true);
    expect(await store.marked('seen:b')).toBe(false);
    clock.advance(1);
    expect(await store.marked('seen:a')).toBe(false);
    await store.mark('seen:a', 10_000); // marked again: holds again
    expect(await store.marked('seen:a')).toBe(true);
  });

  it('the secret is the same for the life of a store, different between stores, and long', async () => {
    const one = new MemoryCacheStore(1_000);
    const two = new MemoryCacheStore(1_000);
    const secret = await one.secret();
    expect(await one.secret()).toBe(secret);
    expect(await two.secret()).not.toBe(secret);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('MemoryCacheStore: what it counts is what the heap holds', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heapUsed = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  /** A page of `rows` rows, distinct for each n, decoded as the upstream client gives it. */
  const page = (n: number, rows: number, valueLength: number): unknown => ({
    data: Array.from({ length: rows }, (_, i) => ({ value: `/blog/${n}/${i}/`.padEnd(valueLength, 'x'), count: 1_000 - i + n })),
    meta: { current_page: 1, per_page: rows },
  });

  it('5,000 distinct stored answers (3 KB bodies) into 8 MiB: heap and buffers grow by 0.8 to 1.25 times the bytes counted', async () => {
    const store = new MemoryCacheStore(8 * 1024 * 1024);
    const held = (): number => heapUsed() + process.memoryUsage().arrayBuffers;
    const before = held();
    for (let n = 0; n < 5_000; n++) {
      const headers = ['content-type', 'application/json; charset=utf-8', 'vary', 'Origin, Authorization', 'etag', `W/"${n}"`];
      const value = { generation: n % 3, writes: n % 5, headers, operation: 'Dashboard', cost: 12, reads: 7 };
      const bytes = Buffer.from(JSON.stringify({ data: { n, rows: `${n}`.padEnd(3_000, 'x') } }));
      await store.set(`b:{key}:${n}`, { value, bytes, freshUntil: Date.now() + 60_000, staleUntil: Date.now() + 60_000 });
    }
    const grown = held() - before;
    expect(store.size.bytes).toBeGreaterThan(8 * 1024 * 1024 * 0.95);
    expect(grown / store.size.bytes).toBeGreaterThan(0.8);
    expect(grown / store.size.bytes).toBeLessThan(1.25);
  });

  it.each([
    { what: '3,000 distinct 22 KB pages into 16 MiB', count: 3_000, rows: 100, valueLength: 190, maxBytes: 16 * 1024 * 1024 },
    { what: '40,000 distinct 300-byte answers into 4 MiB', count: 40_000, rows: 2, valueLength: 100, maxBytes: 4 * 1024 * 1024 },
  ])(
    '$what: the heap after full collections grows by 0.8 to 1.25 times the bytes counted',
    async ({ count, rows, valueLength, maxBytes }) => {
      const store = new MemoryCacheStore(maxBytes);
      const before = heapUsed();
      for (let n = 0; n < count; n++) {
        await store.set(`stats:${n}`, {
          value: page(n, rows, valueLength),
          freshUntil: Date.now() + 60_000,
          staleUntil: Date.now() + 120_000,
        });
      }
      const grown = heapUsed() - before;
      expect(store.size.bytes).toBeGreaterThan(maxBytes * 0.95);
      expect(grown / store.size.bytes).toBeGreaterThan(0.8);
      expect(grown / store.size.bytes).toBeLessThan(1.25);
    },
  );
});
