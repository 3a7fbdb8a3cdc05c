// Writes the store has not heard of yet. When the store cannot take a write's drop (Redis cut, paused, slow,
// full), the key's reads and stored answers go past the store here until its generation is advanced, tried at
// once, every RETRY_MS and when the connection is ready again. A key is held by its id; one not named (no
// secret yet) or past MAX_OWED keys, every key reads past the store until every key that may have entries
// (its `has` mark, walked in the store) had its generation advanced.
import type { CacheStore } from './store.js';
import type { StoreCall } from './waiting.js';
import { keyIdOf } from '../api-key.js';
import { storeNames } from './keys.js';
import { MAX_RECONNECT_DELAY_MS } from './redis-connection.js';

/** How often a drop the store could not take is tried again. */
const RETRY_MS = 100;
/** The most keys with an invalidation pending told apart (docs/caching.md gives the memory). */
const MAX_OWED = 100_000;
/** How long a gateway back on the store reads past it: until every other one is back and sent its drops. */
const RECONNECT_GRACE_MS = MAX_RECONNECT_DELAY_MS + 500;

export class UnsettledWrites {
  /** The ids of the keys with an invalidation pending. */
  private readonly owed = new Set<string>();
  /** The keys forgotten past the bound: a walk is enough only if none was forgotten after it began. */
  private forgotten = 0;
  /** What `forgotten` was when the last complete walk began (every key with entries dropped after). */
  private forgottenDropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private settling = false;
  /** Asked to settle while a settle was under way: it goes again at once. */
  private again = false;
  private closed = false;
  /** Lost since last ready: no key reads through the store (a cluster may answer from a dead master's replica). */
  private lost = false;
  /** Until then, no key reads through the store (other gateways may not be back yet). */
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

  /** Whether the key's reads must not go through the store (a drop pending, or the store lost or just back). */
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

  /** Advances the generation of each key owed, then (keys forgotten) of every key that may have entries. */
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

  /** Every key that may have entries (its `has` mark is set before any entry is) has its generation moved on. */
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
