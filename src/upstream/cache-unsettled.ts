// Writes the store has not heard of yet. A write drops what it touched by moving the key's writes counter
// on in the store (cache.ts's `written`); when the store cannot be reached then (Redis cut, paused, slow,
// full), the key is owed a drop: this process sends none of the key's reads or stored answers through
// the store, and moves the key's generation on (every entry and stored answer of the key out of reach)
// as soon as the store takes it. So no entry from before the write is served after it: here at once,
// through the other gateways on the store from the moment Redis is back.
//  - The drop is tried at once: a Redis that is paused or slow runs it when it answers again, before
//    any read sent after that.
//  - It is tried again every RETRY_MS, and at once when the connection is ready again.
//  - A gateway whose connection was lost reads past the store for RECONNECT_GRACE_MS once it is back:
//    the other gateways reach Redis again within MAX_RECONNECT_DELAY_MS of it (each on its own schedule),
//    and land what they owe as soon as they do.
import type { CacheStore } from './cache-store.js';
import type { StoreCall } from './cache-waiting.js';
import { keyIdOf } from '../api-key.js';
import { storeNames } from './keys.js';
import { MAX_RECONNECT_DELAY_MS } from './redis-connection.js';

/** How often a drop the store could not take is tried again. */
const RETRY_MS = 100;
/** The most keys owed a drop that are told apart: past it, every key reads past the store until they all landed. */
const MAX_OWED = 100_000;
/** How long a gateway back on the store reads past it: every other gateway is back, with time to land its drops. */
const RECONNECT_GRACE_MS = MAX_RECONNECT_DELAY_MS + 500;

export class UnsettledWrites {
  /** The keys (their Authorization as the cache gets it) owed a drop. */
  private readonly owed = new Set<string>();
  /** More keys were owed a drop than MAX_OWED: which ones is not known, so none reads through the store. */
  private overflowed = false;
  private timer: NodeJS.Timeout | undefined;
  private settling = false;
  /** Asked to settle while a settle was under way: it goes again at once. */
  private again = false;
  private closed = false;
  /** The connection was lost since it was last ready. */
  private lost = false;
  /** Until then, no key reads through the store (the connection came back, other gateways may not have yet). */
  private distrustedUntil = 0;

  constructor(
    private readonly store: CacheStore,
    private readonly safely: StoreCall,
  ) {
    store.onConnection?.((event) => {
      if (event === 'lost') {
        this.lost = true;
        return;
      }
      if (this.lost) this.distrustedUntil = Date.now() + RECONNECT_GRACE_MS;
      this.lost = false;
      if (this.owed.size > 0) this.settleSoon(0);
    });
  }

  /** A write with the key was made and the store did not take its drop. */
  owe(authorization: string): void {
    if (this.owed.size >= MAX_OWED && !this.owed.has(authorization)) this.overflowed = true;
    else this.owed.add(authorization);
    this.settleSoon(0);
  }

  /** Whether the key's reads must not go through the store (a drop it is owed has not landed, or the store is just back). */
  owes(authorization: string): boolean {
    return this.overflowed || this.owed.has(authorization) || Date.now() < this.distrustedUntil;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** Settles in `delayMs` (sooner if a settle was already due sooner), or right after the one under way. */
  private settleSoon(delayMs: number): void {
    if (this.closed) return;
    if (this.settling) {
      if (delayMs === 0) this.again = true;
      return;
    }
    if (this.timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.settle(), delayMs);
    this.timer.unref();
  }

  /** Moves on each owed key's generation, in turn; at the first failure, tries again later. */
  private async settle(): Promise<void> {
    this.timer = undefined;
    this.settling = true;
    this.again = false;
    try {
      for (const authorization of [...this.owed]) {
        if (this.closed) return;
        const secret = await this.safely('secret', () => this.store.secret());
        if (secret === undefined) break;
        const keyId = keyIdOf(secret, authorization);
        if ((await this.safely('drop after a write', () => this.store.bump(storeNames.generation(keyId)))) === undefined) break;
        this.owed.delete(authorization);
      }
    } finally {
      this.settling = false;
    }
    // Every key owed was forgotten past the bound: once those that are known landed, a write may have
    // been lost only for the others, which this process cannot name. It keeps reading past the store.
    if (this.owed.size > 0) this.settleSoon(this.again ? 0 : RETRY_MS);
  }
}
