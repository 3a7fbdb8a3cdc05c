// One context per GraphQL request: the caller's key (read once, into the request's state) and a fresh
// upstream data source bound to it (upstream/source.ts). Nothing here outlives the request, which is
// what keeps one key's data away from another key.
import type { ServerResponse } from 'node:http';
import type { GatewayContext, Usage } from '../schema/context.js';
import type { Freshness } from '../cache/read-cache.js';
import { createSource, type RequestBounds, type Upstream } from '../upstream/source.js';
import type { RequestState } from './request-state.js';

/**
 * Aborted when the client leaves before its answer is sent, as @whatwg-node's `request.signal` is: that
 * one is a Proxy whose every property (each of addEventListener's internal symbols) passes its traps.
 */
function callerLeft(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed && !res.writableFinished) controller.abort(res.errored ?? undefined);
  else res.once('close', () => (res.writableFinished ? undefined : controller.abort(res.errored ?? undefined)));
  return controller.signal;
}

/**
 * The context of the request whose state is `state`; `caller`, its HTTP answer, or for a live poll (which
 * has none) its request's signal. A live poll reads today's figures fresh (`freshness`).
 */
export function createContext(
  upstream: Upstream,
  bounds: RequestBounds,
  state: RequestState,
  caller: ServerResponse | AbortSignal,
  freshness?: Freshness,
): GatewayContext {
  const usage: Usage = { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
  const source = createSource(upstream, {
    credentials: state.credentials,
    signal: caller instanceof AbortSignal ? caller : callerLeft(caller),
    deadline: Date.now() + bounds.requestDeadlineMs,
    maxConcurrency: bounds.maxConcurrency,
    usage,
    freshness,
    ...(state.lookup ? { lookedUp: state.lookup } : {}),
    trace: state.trace,
  });
  // One "today" for the whole request: periods resolved by the plan's cost count, the look-ahead and
  // every resolver (a list of websites, a deferred part) use this instant, so a request running across
  // midnight never mixes two days.
  const now = upstream.clock.now();
  return {
    source,
    clock: { timeZone: upstream.clock.timeZone, now: () => now },
    lookahead: new Map(),
    keyKnown: state.keyKnown,
    usage,
  };
}
