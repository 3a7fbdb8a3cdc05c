// The keys the upstream accepted lately, as admission control (admission.ts) asks: a request with one
// waits in the known line, any other in the strangers'. A key enters when a request made with it got an
// answer from the upstream (source.keyAccepted), and leaves KEY_RECHECK_S after the last such answer, or
// when more keys than MAX_KNOWN_KEYS came since. Only keys the upstream accepted enter, so nobody without
// one can fill it. Per process: each worker learns its own.
import { LRUCache } from 'lru-cache';

/** How many accepted keys a process remembers (the least recently accepted go first). */
export const MAX_KNOWN_KEYS = 10_000;

export interface KnownKeys {
  /** Whether the upstream accepted this key (`Bearer <token>`, canonical: readAuthorization) lately. */
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
