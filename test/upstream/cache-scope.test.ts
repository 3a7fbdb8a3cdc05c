// A request's scope in the read cache (upstream/cache-scope.ts), on a real memory store: the key's
// counters read once, entry names that move with them, and no scope without a key or a store.
import { describe, expect, it } from 'vitest';
import { readScope, scopeWith } from '../../src/upstream/cache-scope.js';
import { MemoryCacheStore } from '../../src/upstream/cache-store.js';
import { safeStore } from '../../src/upstream/cache-waiting.js';
import { keyIdOf } from '../../src/api-key.js';
import { storeNames } from '../../src/upstream/keys.js';

const ask = safeStore(undefined);

describe('readScope', () => {
  it('reads the key’s generation and writes counter under its keyed hash', async () => {
    const store = new MemoryCacheStore(100_000);
    const keyId = keyIdOf(await store.secret(), 'Bearer k');
    await store.bump(storeNames.generation(keyId), 60_000);
    await store.bump(storeNames.writes(keyId), 60_000);
    await store.bump(storeNames.writes(keyId), 60_000);
    const scope = await readScope(store, ask, 'Bearer k');
    expect(scope).toMatchObject({ keyId, generation: 1, lists: 2 });
    expect(scope?.guard).toEqual({ [storeNames.generation(keyId)]: 1 });
    expect(scope?.listsGuard).toEqual({ [storeNames.generation(keyId)]: 1, [storeNames.writes(keyId)]: 2 });
  });

  it('is null without a key, or when the store cannot answer', async () => {
    const store = new MemoryCacheStore(100_000);
    expect(await readScope(store, ask, null)).toBeNull();
    const failing = Object.assign(new MemoryCacheStore(100_000), { counter: () => Promise.reject(new Error('down')) });
    expect(await readScope(failing, ask, 'Bearer k')).toBeNull();
  });
});

describe('scopeWith', () => {
  it('names a list’s entry with the writes counter, any other with the generation only', () => {
    const [before, after, revoked] = [scopeWith('id', 0, 3), scopeWith('id', 0, 4), scopeWith('id', 1, 3)];
    expect(before.entryName('websites', 'all', 'any')).not.toBe(after.entryName('websites', 'all', 'any'));
    expect(before.entryName('website', '7', 'own')).toBe(after.entryName('website', '7', 'own'));
    expect(before.entryName('website', '7', 'own')).toBe(before.entryName('website', '7'));
    expect(before.entryName('website', '7', 'none')).not.toBe(revoked.entryName('website', '7', 'none'));
  });
});
