// A request's scope in the read cache: its key's id and counters, read once. An entry's name holds the key's
// generation (a 401 moves it on) and, for a list, its writes counter; what a request read stays storable only
// while the counters it read stand.
import type { CacheStore, CounterGuard } from './store.js';
import type { BudgetUse, StoreCall } from './waiting.js';
import { keyIdOf } from '../api-key.js';
import { storeNames } from './keys.js';

/** A request's view of its key in the store; `lists` is its writes counter as the request knows it. */
export function scopeWith(keyId: string, generation: number, lists: number) {
  /** What a record read now stays storable under: the key's generation, which a 401 moves on. */
  const guard: CounterGuard = { [storeNames.generation(keyId)]: generation };
  const prefix = storeNames.entries(keyId, generation);
  return {
    keyId,
    generation,
    lists,
    guard,
    /** The same and the writes counter, which every write moves on: for websites and lists. */
    listsGuard: { ...guard, [storeNames.writes(keyId)]: lists } as CounterGuard,
    /** The name of the entry `kind`/`key`; a list's (`droppedByWrites` any) holds the writes counter. */
    entryName: (kind: string, key: string, droppedByWrites?: 'any' | 'own' | 'none'): string =>
      storeNames.entry(prefix, droppedByWrites === 'any' ? `${kind}${lists}` : kind, key),
  };
}
export type Scope = ReturnType<typeof scopeWith>;

/** The scope of a request made with `authorization`; null without a key, or when the store cannot say. */
export async function readScope(store: CacheStore, ask: StoreCall, authorization: string | null): Promise<Scope | null> {
  if (authorization === null) return null;
  const secret = await ask('secret', () => store.secret());
  if (secret === undefined) return null;
  const keyId = keyIdOf(secret, authorization);
  const [generation, lists] = await Promise.all([
    ask('counter', () => store.counter(storeNames.generation(keyId))),
    ask('counter', () => store.counter(storeNames.writes(keyId))),
  ]);
  if (generation === undefined || lists === undefined) return null;
  return scopeWith(keyId, generation, lists);
}

/** The store's part of one request, made by its stored-answer lookup: budget spent, the key's counters, its answer's name. */
export interface StoreSession {
  use: BudgetUse;
  scope?: { keyId: string; generation: number; lists: number };
  /** The stored answer's name, when the request was looked up and not answered. */
  answerName?: string;
}
