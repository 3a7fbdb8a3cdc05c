// The keys the upstream accepted lately (admission's known line), for KEY_RECHECK_S after the last
// answer, at most MAX_KNOWN_KEYS. Only accepted keys enter, so nobody without one can fill it. Per process.
import { LRUCache } from 'lru-cache';

export const MAX_KNOWN_KEYS = 10_000;

/** Keys in their canonical form (readAuthorization). */
export function createKnownKeys(forMs: number) {
  const keys = new LRUCache<string, true>({ max: MAX_KNOWN_KEYS, ttl: forMs, ttlAutopurge: false });
  return {
    knows: (authorization: string): boolean => keys.has(authorization),
    remember: (authorization: string): void => void keys.set(authorization, true),
  };
}
