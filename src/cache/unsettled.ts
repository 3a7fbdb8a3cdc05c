// Writes the store has not heard of yet. A write drops what it touched by moving the key's writes counter
// on in the store (read-cache.ts's `written`); when the store cannot be reached then (Redis cut, paused, slow,
// full), the key has an invalidation pending: this process sends none of the key's reads or stored answers through
// the store, and advances the key's generation (every entry and stored answer of the key out of reach)
// as soon as the store takes it. So no entry from before the write is served after it: here at once,
// through the other gateways on the store from the moment Redis is back.
//  - The drop is tried at once: a Redis that is paused or slow runs it when it answers again, before
//    any read sent after that.
//  - It is tried again every RETRY_MS, and at once when the connection is ready again.
//  - A gateway whose connection was lost reads past the store for RECONNECT_GRACE_MS once it is back:
//    the other gateways reach Redis again within MAX_RECONNECT_DELAY_MS of it (each on its own schedule),
//    and send their pending invalidations as soon as they do.
//  - A key is held by its id (the keyed hash of its Authorization, with the secret last read from Redis),
//    never by its header: what is owed is bounded in bytes whatever the keys' size. A gateway that never
//    read the secret cannot name the key, and counts it as one past the bound.
//  - Past MAX_OWED keys this process cannot name them all: every key reads past the store, and once
//    the keys it knows reached Redis, it advances the generation of every key that may have entries (their
//    `has` marks, walked in the store), then uses the store again.
import type { CacheStore } from './store.js';
import type { StoreCall } from './waiting.js';
import { keyIdOf } from '../api-key.js';
import { storeNames } from './keys.js';
import { MAX_RECONNECT_DELAY_MS } from './redis-connection.js';

/** How often a drop the store could not take is tried again. */
const RETRY_MS = 100;
/**
 * The most keys with an invalidation pending that are told apart (their ids, of 32 characters each:
 * docs/caching.md gives the memory): past it, every key reads past the store until every key with
 * entries was dropped.
 */
const MAX_OWED = 100_000;
/** How long a gateway back on the store reads past it: every other gateway is back, and has sent its pending invalidations. */
const RECONNECT_GRACE_MS = MAX_RECONNECT_DELAY_MS + 500;

export class UnsettledWrites {
  /** The ids of the keys with an invalidation pending. */
  private readonly owed = new Set<string>();
  /**
   * More keys were with an invalidation pending than the bound: which ones is not known, so none reads through the
   * store until every key that may have entries was dropped. Counts the keys forgotten: a walk is
   * enough only if none was forgotten after it began.
   */
  private forgotten = 0;
  /** What `forgotten` was when the last complete walk began (every key with entries dropped after). */
  private forgottenDropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private settling = false;
  /** Asked to settle while a settle was under way: it goes again at once. */
  private again = false;
  private closed = false;
  /**
   * The connection was lost since it was last ready: no key reads through the store meanwhile. One
   * Redis then fails every call at once anyway; a cluster whose master died still answers from the
   * others, and may answer for the dead one's slots from its replica (a redirection followed) before
   * the gateway that wrote there found it.
   */
  private lost = false;
  /** Until then, no key reads through the store (the connection came back, other gateways may not have yet). */
  private distrustedUntil = 0;

  constructor(
    /** With the secret it last read (`known`): a key's id is made without a call, during an outage too. */
    private readonly store: CacheStore & { readonly known?: string | undefined },
    private readonly safely: StoreCall,
    /** How long any entry can live, stale included: a generation moved on lives at least as long. */
    private readonly entryLifeMs: number,
    private readonly maxOwed = MAX_OWED,
  ) {
    store.onConnection?.((event) => {
      if (event === 'lost') {
        this.lost = true;
        return;
      }
      if (this.lost) this.distrustedUntil = Date.now() + RECONNECT_GRACE_MS;
      this.lost = false;
      if (this.unsettled) this.settleSoon(0);
    });
  }

  /** A write with the key was made and the store did not take its drop. */
  pend(authorization: string): void {
    const keyId = this.idOf(authorization);
    if (keyId === undefined || (this.owed.size >= this.maxOwed && !this.owed.has(keyId))) this.forgotten++;
    else this.owed.add(keyId);
    this.settleSoon(0);
  }

  /** Whether the key's reads must not go through the store (its invalidation is still pending, or the store is lost or just back). */
  owes(authorization: string): boolean {
    if (this.overflowed || this.lost || Date.now() < this.distrustedUntil) return true;
    if (this.owed.size === 0) return false;
    const keyId = this.idOf(authorization);
    return keyId === undefined || this.owed.has(keyId);
  }

  /** The key's id, with the secret the store last gave; undefined before it gave one. */
  private idOf(authorization: string): string | undefined {
    const secret = this.store.secretNow?.() ?? this.store.known;
    return secret === undefined ? undefined : keyIdOf(secret, authorization);
  }

  /** Keys were forgotten past the bound, and not every key with entries was dropped since. */
  private get overflowed(): boolean {
    return this.forgotten !== this.forgottenDropped;
  }

  /** Invalidations are still pending. */
  private get unsettled(): boolean {
    return this.owed.size > 0 || this.overflowed;
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

  /**
   * Advances the generation of each key with an invalidation pending, in turn, then (keys forgotten past
   * the bound) of every key that may have entries; at the first failure, tries again later.
   */
  private async settle(): Promise<void> {
    this.timer = undefined;
    this.settling = true;
    this.again = false;
    try {
      if ((await this.settleOwed()) && this.overflowed) await this.dropEveryKey();
    } finally {
      this.settling = false;
    }
    if (this.unsettled) this.settleSoon(this.again ? 0 : RETRY_MS);
  }

  /** Whether every key with an invalidation pending got it. */
  private async settleOwed(): Promise<boolean> {
    for (const keyId of [...this.owed]) {
      if (this.closed) return false;
      if (!(await this.drop(keyId))) return false;
      this.owed.delete(keyId);
    }
    return true;
  }

  /**
   * The keys forgotten cannot be named: every key's generation is moved on that may have entries (its
   * `has` mark is set before any entry or stored answer is), found by walking the store. A key that
   * has none has nothing from before the write to serve.
   */
  private async dropEveryKey(): Promise<void> {
    const forgotten = this.forgotten;
    try {
      for await (const names of this.store.namesStartingWith(storeNames.everyHasEntries)) {
        if (this.closed) return;
        const keyIds = names.map(storeNames.keyIdOfHasEntries).filter((keyId) => keyId !== undefined);
        const dropped = await Promise.all(keyIds.map((keyId) => this.drop(keyId)));
        if (dropped.includes(false)) return;
      }
    } catch {
      return; // the walk failed (the store's timeout): tried again later
    }
    this.forgottenDropped = forgotten;
  }

  /** Advances the key's generation; whether the store took it. */
  private async drop(keyId: string): Promise<boolean> {
    return (await this.safely('drop after a write', () => this.store.bump(storeNames.generation(keyId), this.entryLifeMs))) !== undefined;
  }
}
