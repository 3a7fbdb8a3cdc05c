// The open event streams (subscriptions over SSE): each is closed LIVE_MAX_LIFETIME_S after it opened,
// and all of them at once when the gateway starts draining.
//
// A stream is ended by closing its connection, never with the protocol's `complete` event: a
// graphql-sse client (and the Apollo and urql links built on it) takes `complete` as the end of the
// subscription for good, whereas a connection that closes while it waits for results is a network
// error, which it retries with its backoff: here again (past its lifetime, which rebalances long-lived
// connections), or on another replica (drain). Closing the response aborts its request: yoga returns
// the subscription's iterator, and the live hub lets go of the stream (a poller stops with its last one).
import type { ServerResponse } from 'node:http';

export interface OpenStreams {
  /** Follows a stream from now on: closed at the end of its lifetime or at closeAll(), forgotten once closed. */
  track(res: ServerResponse): void;
  /** Closes every open stream at once (drain); says how many there were. */
  closeAll(): number;
  /** Streams open now. */
  readonly size: number;
}

export function createOpenStreams(maxLifetimeMs: number): OpenStreams {
  const open = new Map<ServerResponse, NodeJS.Timeout>();
  return {
    track(res) {
      if (res.destroyed) return;
      // Between 90 % and all of LIVE_MAX_LIFETIME_S, in whole seconds: streams opened together (after a
      // drain elsewhere) do not all reconnect at the same moment, and node keeps timers of one duration
      // in one list (a few hundred lists at most).
      const lifetime = setTimeout(() => res.destroy(), lifetimeOf(maxLifetimeMs));
      open.set(res, lifetime);
      res.once('close', () => {
        clearTimeout(lifetime);
        open.delete(res);
      });
    },
    closeAll() {
      const streams = [...open.keys()];
      for (const res of streams) res.destroy();
      return streams.length;
    },
    get size() {
      return open.size;
    },
  };
}

/** A stream's lifetime: between 90 % and all of the maximum, rounded down to whole seconds (above 10 s). */
export function lifetimeOf(maxLifetimeMs: number, random: () => number = Math.random): number {
  const spread = maxLifetimeMs * (0.9 + 0.1 * random());
  return maxLifetimeMs > 10_000 ? Math.floor(spread / 1_000) * 1_000 : spread;
}
