// The marks the read cache keeps of each key in the store (their names: keys.ts): `seen` allows its cached
// answers; `has entries` lets a 401 or a write drop them (unknown keys answered 401 leave nothing in the store).
import type { CacheStore } from './store.js';
import type { StoreCall } from './waiting.js';
import { storeNames } from './keys.js';

export class KeyMarks {
  constructor(
    private readonly store: CacheStore,
    private readonly safely: StoreCall,
    /** How long a `seen` mark lasts (KEY_RECHECK_S). */
    private readonly recheckMs: number,
    /** How long any entry can live, stale included: as long as a `has entries` mark lasts. */
    private readonly entryLifeMs: number,
  ) {}

  /** The upstream accepted the key just now. */
  async seen(keyId: string): Promise<void> {
    await this.safely('mark', () => this.store.mark(storeNames.seen(keyId), this.recheckMs));
  }

  /** Whether the upstream accepted the key within KEY_RECHECK_S, asked through `lookup`. */
  async wasSeen(keyId: string, lookup: StoreCall): Promise<boolean> {
    return (await lookup('marked', () => this.store.marked(storeNames.seen(keyId)))) === true;
  }

  /** Said before an entry is stored: what a 401 or a write must drop. */
  async willHaveEntries(keyId: string): Promise<void> {
    await this.safely('mark', () => this.store.mark(storeNames.hasEntries(keyId), this.entryLifeMs));
  }

  /** Whether the key may have entries, asked through `lookup`: undefined when the store cannot say. */
  async mayHaveEntries(keyId: string, lookup: StoreCall = this.safely): Promise<boolean | undefined> {
    return lookup('marked', () => this.store.marked(storeNames.hasEntries(keyId)));
  }

  /** A revoked key's generation moves on, if it may have entries (a failing store: as if not). */
  async dropEntriesOf(keyId: string): Promise<void> {
    if ((await this.mayHaveEntries(keyId)) === true)
      await this.safely('bump', () => this.store.bump(storeNames.generation(keyId), this.entryLifeMs));
  }
}
