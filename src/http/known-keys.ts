// The keys the upstream accepted lately (admission's known line), for KEY_RECHECK_S after the last
// answer, at most MAX_KNOWN_KEYS. Only accepted keys enter, so nobody without one can fill it. Per process.
import { LRUCache } from 'lru-cache';

export const MAX_KNOWN_KEYS = 10_000;

export interface KnownKeys {
  /** `authorization`: canonical (readAuthorization). */
  knows(authorization: string): boolean;
  remember(authorization: string): void;
}

export function createKnownKeys(forMs: number): KnownKeys {
  const keys = new LRUCache<string, true>({ max: MAX_KNOWN_KEYS, ttl: forMs, ttlAutopurge: false });
  return {
    knows: (authorization) => keys.has(authorization),
    remember: (authorization) => void keys.set(authorization, true),
  };
}
