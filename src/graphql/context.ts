// One context per GraphQL request: the caller's key read from its header, and a fresh upstream data
// source bound to it (upstream/source.ts). Nothing here outlives the request, which is what keeps one
// key's data away from another key.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext, Usage } from '../schema/context.js';
import type { Freshness } from '../upstream/cache.js';
import { lookupOf } from '../upstream/cache-scope.js';
import { createSource, type RequestBounds, type Upstream } from '../upstream/source.js';

// RFC 9110 (11.4): credentials are a scheme, case-insensitive, then one or more spaces and the token;
// RFC 6750's b64token is what a Bearer token may look like. Anything else is refused before it is forwarded.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The credential read once, in its one canonical form, `Bearer <token>` (the token as sent): `bearer K`,
 * `BEARER K` and `Bearer  K` are one key. What goes upstream, and what names everything of a key (its
 * cache partition and revocation, its live topics, caps and budget); or an error saying what is wrong.
 */
export function readAuthorization(header: string | null): { authorization: string } | { problem: string } {
  if (header === null || header.trim() === '') {
    return { problem: 'Send your analytics API key as "Authorization: Bearer <key>".' };
  }
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) {
    return {
      problem:
        'The Authorization header must be one "Bearer <key>" (the scheme Bearer, a space, the key from your analytics account page).',
    };
  }
  return { authorization: `Bearer ${token}` };
}

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
 * `req` and `res`: the HTTP request and answer (none for a live poll, whose request carries its own
 * signal); `req` says what its stored-answer lookup spent of its store budget and found. `keyKnown`:
 * the install accepted its key lately (GatewayContext.keyKnown).
 */
export function createContext(
  request: Request,
  upstream: Upstream,
  bounds: RequestBounds,
  freshness?: Freshness,
  http?: { req?: IncomingMessage; res?: ServerResponse },
  keyKnown = true,
): GatewayContext {
  const res = http?.res;
  const lookedUp = lookupOf(http?.req);
  const usage: Usage = { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
  const source = createSource(upstream, {
    credentials: readAuthorization(request.headers.get('authorization')),
    signal: res === undefined ? request.signal : callerLeft(res),
    deadline: Date.now() + bounds.requestDeadlineMs,
    maxConcurrency: bounds.maxConcurrency,
    usage,
    freshness,
    ...(lookedUp ? { lookedUp } : {}),
  });
  // One "today" for the whole request: periods resolved by the plan's cost count, the look-ahead and
  // every resolver (a list of websites, a deferred part) use this instant, so a request running across
  // midnight never mixes two days.
  const now = upstream.clock.now();
  return { source, clock: { timeZone: upstream.clock.timeZone, now: () => now }, lookahead: new Map(), keyKnown, usage };
}
