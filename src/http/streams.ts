// The open event streams, closed LIVE_MAX_LIFETIME_S after they opened and all on drain, by closing the
// connection: graphql-sse clients take `complete` as the end for good, but retry a closed connection,
// here (which rebalances long-lived connections) or on another replica.
import type { ServerResponse } from 'node:http';

export function createOpenStreams(maxLifetimeMs: number) {
  const open = new Map<ServerResponse, NodeJS.Timeout>();
  return {
    track(res: ServerResponse): void {
      if (res.destroyed) return;
      // Spread: streams opened together (after a drain elsewhere) do not all reconnect at once.
      const lifetime = setTimeout(() => res.destroy(), lifetimeOf(maxLifetimeMs));
      open.set(res, lifetime);
      res.once('close', () => {
        clearTimeout(lifetime);
        open.delete(res);
      });
    },
    /** Says how many there were. */
    closeAll(): number {
      const streams = [...open.keys()];
      for (const res of streams) res.destroy();
      return streams.length;
    },
  };
}

/** 90 % to all of the maximum, in whole seconds above 10 s: node keeps timers of one duration in one list. */
export function lifetimeOf(maxLifetimeMs: number, random: () => number = Math.random): number {
  const spread = maxLifetimeMs * (0.9 + 0.1 * random());
  return maxLifetimeMs > 10_000 ? Math.floor(spread / 1_000) * 1_000 : spread;
}
