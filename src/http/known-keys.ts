// The keys the upstream accepted lately (admission's known line), for KEY_RECHECK_S after the last
// answer, at most MAX_KNOWN_KEYS. Only accepted keys enter, so nobody without one can fill it. Per process.

export const MAX_KNOWN_KEYS = 10_000;

/** Keys in their canonical form (readAuthorization). */
export function createKnownKeys(forMs: number) {
  // Each key's end, the least lately moved to the back first. Not lru-cache's ttl: its clock set a timer a millisecond.
  const until = new Map<string, number>();
  return {
    knows: (authorization: string): boolean => (until.get(authorization) ?? 0) > performance.now(),
    remember: (authorization: string): void => {
      const now = performance.now();
      const end = until.get(authorization);
      // Moved to the back when half its time is gone, not at every answer: a Map reordered per request churns.
      if (end !== undefined && end - now < forMs / 2) until.delete(authorization);
      else if (end === undefined && until.size >= MAX_KNOWN_KEYS) until.delete(until.keys().next().value as string);
      until.set(authorization, now + forMs);
    },
  };
}
