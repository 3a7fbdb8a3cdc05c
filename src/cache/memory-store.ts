// The memory store: an LRU bounded by what records cost in V8's heap, expiring at their stale lifetime. A record
// is held as its JSON text, parsed on each hit: one string, not the hundreds of objects every collection traces
// (docs/performance.md#memory). A stored answer's body is held in a buffer of its own, its value frozen.
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CacheRecord, CacheStore, CounterGuard, StoreLook } from './store.js';

/** Characters a one-byte V8 string cannot hold: a text with any of them takes two bytes a character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is Latin-1 from its first character, U+0000.
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;
/** A record's own objects, its entry in the LRU and its key's header. */
const RECORD_OVERHEAD_BYTES = 200;

/** A value held decoded (a record with bytes) is counted as this many times its JSON text. */
const DECODED_FACTOR = 2;

/** What a record whose value is `text` as JSON costs under `key`, in bytes. */
function heldBytes(key: string, text: string, bytes: Uint8Array | undefined): number {
  const perCharacter = BEYOND_LATIN1.test(text) ? 2 : 1;
  const valueBytes = perCharacter * text.length * (bytes === undefined ? 1 : DECODED_FACTOR);
  return key.length + valueBytes + (bytes?.byteLength ?? 0) + RECORD_OVERHEAD_BYTES;
}

/** `text` decoded and frozen all through: held once, given as it is to every hit. */
function frozenFrom(text: string): unknown {
  const freeze = (value: unknown): unknown => {
    if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) freeze(inner);
    return Object.freeze(value);
  };
  return freeze(JSON.parse(text));
}

/** A copy of `bytes` in a buffer of its own: not a slice of node's shared pool, which would keep all of it. */
function ownCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

type HeldRecord = (
  | {
      text: string;
    }
  | {
      bytes: Buffer;
      value: unknown;
    }
) & { freshUntil: number; staleUntil: number };

export class MemoryCacheStore implements CacheStore {
  private readonly records: LRUCache<string, HeldRecord>;
  private readonly counters = new Map<string, number>();
  private readonly marks = new Map<string, number>();
  private marksSwept = 0;
  private readonly processSecret = randomBytes(32).toString('hex');

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.records = new LRUCache<string, HeldRecord>({
      maxSize: Math.max(1, maxBytes),
      // A record's lifetime is counted on the gateway's clock (tests pin it), up to its stale lifetime.
      perf: { now: () => this.now() },
      ttlResolution: 0,
    });
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.records.size, bytes: this.records.calculatedSize };
  }

  async get(key: string): Promise<CacheRecord | undefined> {
    return this.getNow(key);
  }

  private getNow(key: string): CacheRecord | undefined {
    const held = this.records.get(key);
    if (held === undefined) return undefined;
    // lru-cache counts a record stale only past its ttl: at staleUntil itself it is gone already.
    if (held.staleUntil <= this.now()) {
      this.records.delete(key);
      return undefined;
    }
    const { freshUntil, staleUntil } = held;
    return 'text' in held
      ? { value: JSON.parse(held.text) as unknown, freshUntil, staleUntil }
      : { value: held.value, bytes: held.bytes, freshUntil, staleUntil };
  }

  async set(key: string, record: CacheRecord, guard?: CounterGuard): Promise<boolean> {
    // Checked and done without an await, so nothing can fall between (a bump, say).
    if (guard !== undefined && !this.holds(guard)) return false;
    this.records.delete(key);
    const text = JSON.stringify(record.value) as string | undefined;
    const ttl = record.staleUntil - this.now();
    if (text === undefined || ttl <= 0) return false;
    const size = heldBytes(key, text, record.bytes);
    // A record larger than the whole bound is not kept (lru-cache's maxEntrySize is the bound).
    if (size > this.records.maxSize) return false;
    const { freshUntil, staleUntil } = record;
    const held: HeldRecord =
      record.bytes === undefined
        ? { text, freshUntil, staleUntil }
        : { bytes: ownCopy(record.bytes), value: frozenFrom(text), freshUntil, staleUntil };
    this.records.set(key, held, { ttl, size });
    return true;
  }

  private holds(guard: CounterGuard): boolean {
    for (const name in guard) if ((this.counters.get(name) ?? 0) !== guard[name]) return false;
    return true;
  }

  async delete(key: string): Promise<void> {
    this.records.delete(key);
  }

  async counter(name: string): Promise<number> {
    return this.counters.get(name) ?? 0;
  }

  /** Counters live as long as this process: it keeps the counters of the keys the upstream accepted. */
  async bump(name: string, _lifetimeMs: number): Promise<number> {
    const next = (this.counters.get(name) ?? 0) + 1;
    this.counters.set(name, next);
    return next;
  }

  async mark(name: string, ttlMs: number): Promise<void> {
    this.marks.set(name, this.now() + ttlMs);
    // Marks outlive the keys that made them: sweep the expired ones now and then, so they stay few.
    if (this.marks.size > this.marksSwept * 2 + 1_000) {
      const at = this.now();
      for (const [mark, until] of this.marks) if (until <= at) this.marks.delete(mark);
      this.marksSwept = this.marks.size;
    }
  }

  async marked(name: string): Promise<boolean> {
    return this.markedNow(name);
  }

  private markedNow(name: string): boolean {
    const until = this.marks.get(name);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.marks.delete(name);
    return false;
  }

  async *namesStartingWith(prefix: string): AsyncIterable<string[]> {
    const names = new Set<string>();
    for (const keys of [this.records.keys(), this.counters.keys(), this.marks.keys()])
      for (const name of keys) if (name.startsWith(prefix)) names.add(name);
    yield [...names];
  }

  async secret(): Promise<string> {
    return this.processSecret;
  }

  secretNow(): string {
    return this.processSecret;
  }

  async look(key: string, counters: readonly string[], marks: readonly string[]): Promise<StoreLook> {
    return this.lookNow(key, counters, marks);
  }

  lookNow(key: string, counters: readonly string[], marks: readonly string[]): StoreLook {
    return {
      record: this.getNow(key),
      counters: counters.map((name) => this.counters.get(name) ?? 0),
      marks: marks.map((name) => this.markedNow(name)),
    };
  }

  async close(): Promise<void> {
    this.records.clear();
  }
}
