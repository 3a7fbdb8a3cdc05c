// Writes the store has not heard of yet. A write drops what it touched by moving the key's writes counter
// on in the store (cache.ts's `written`); when the store cannot be reached then (Redis cut, paused, slow,
// full), the key is owed a drop: this process sends none of the key's reads or stored answers through
// the store, and moves the key's generation on (every entry and stored answer of the key out of reach)
// as soon as the store takes it, trying again every `retryMs`. So no entry from before the write is
// served after it, here at once, through the other gateways on the store once the drop lands.
import type { CacheStore } from './cache-store.js';
import type { StoreCall } from './cache-waiting.js';
import { keyIdOf, storeNames } from './keys.js';

/** How often a drop the store could not take is tried again. */
const RETRY_MS = 200;
/** The most keys owed a drop that are told apart: past it, every key reads past the store until they all landed. */
const MAX_OWED = 100_000;

export class UnsettledWrites {
  /** The keys (their Authorization as the cache gets it) owed a drop. */
  private readonly owed = new Set<string>();
  /** More keys were owed a drop than MAX_OWED: which ones is not known, so none reads through the store. */
  private overflowed = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: CacheStore,
    private readonly safely: StoreCall,
    private readonly retryMs = RETRY_MS,
    private readonly maxOwed = MAX_OWED,
  ) {}

  /** A write with the key was made and the store did not take its drop. */
  owe(authorization: string): void {
    if (this.owed.size >= this.maxOwed && !this.owed.has(authorization)) this.overflowed = true;
    else this.owed.add(authorization);
    this.schedule();
  }

  /** Whether the key's reads must not go through the store (a drop it is owed has not landed). */
  owes(authorization: string): boolean {
    return this.overflowed || this.owed.has(authorization);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => void this.settle(), this.retryMs);
    this.timer.unref();
  }

  /** Moves on each owed key's generation, in turn; at the first failure, tries again later. */
  private async settle(): Promise<void> {
    for (const authorization of [...this.owed]) {
      if (this.closed) return;
      const secret = await this.safely('secret', () => this.store.secret());
      if (secret === undefined) break;
      const keyId = keyIdOf(secret, authorization);
      if ((await this.safely('drop after a write', () => this.store.bump(storeNames.generation(keyId)))) === undefined) break;
      this.owed.delete(authorization);
    }
    // Every key owed was forgotten past the bound: once those that are known landed, a write may have
    // been lost only for the others, which this process cannot name. It keeps reading past the store.
    this.timer = undefined;
    if (this.owed.size > 0) this.schedule();
  }
}
