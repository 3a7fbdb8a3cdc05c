// One context per GraphQL request: the caller's key, fresh loaders and a bound upstream sender.
// Nothing here outlives the request, which is what keeps one key's data away from another key.
import type { FieldNode } from 'graphql';
import type { LookedAhead } from '../schema/prefetch.js';
import type { Config } from '../config.js';
import type { RateLimit } from '../domain.js';
import { GatewayError } from '../errors.js';
import { fetchWebsitePage, type Send } from '../upstream/api.js';
import type { CacheUsage, RequestCache, ResponseCache } from '../upstream/cache.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { StatNames } from '../upstream/dialect.js';
import { concurrencyLimit } from '../upstream/concurrency.js';
import { createLoaders, type Loaders } from '../upstream/loaders.js';

/** The clock periods are resolved with: "today" is in the install's time zone. */
export interface Clock {
  now(): number;
  timeZone: string;
}

export interface GatewayContext {
  loaders: Loaders;
  clock: Clock;
  /** The request's view of the read cache; writes tell it what they changed. */
  cache: RequestCache;
  send: Send;
  /** What schema/prefetch.ts worked out ahead for a Website.stats field, so its resolver need not again. */
  lookahead: Map<FieldNode, LookedAhead>;
  /**
   * Figures for extensions and logs. A shared object on purpose: yoga copies the context's fields
   * into its own context object, so a field assigned later would not be seen through this one.
   */
  readonly usage: Usage;
}

export interface Usage {
  /** Upstream calls made for this request (retries not counted). */
  upstreamCalls: number;
  /** The operation's cost as counted before it ran (graphql/plugins/use-cost-limit.ts); null until then. */
  cost: number | null;
  /** What the install's latest answer said of the key's rate limit; null when it said nothing. */
  rateLimit: RateLimit | null;
  /** What the reads did with the cache (the same object as the request cache's). */
  cache: CacheUsage;
}

// RFC 6750 b64token: what an API key may look like. Anything else is refused before it is forwarded.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The header to forward, or an error saying what is wrong with it. */
export function readAuthorization(header: string | null): { authorization: string } | { problem: string } {
  if (header === null || header.trim() === '') {
    return { problem: 'Send your analytics API key as "Authorization: Bearer <key>".' };
  }
  if (!BEARER.test(header)) {
    return { problem: 'The Authorization header must be "Bearer <key>", the key from your analytics account page.' };
  }
  return { authorization: header };
}

/** What outlives a request: the upstream client, and what the gateway has learnt of the install. */
export interface Upstream {
  client: UpstreamClient;
  statNames: StatNames;
  cache: ResponseCache;
  clock: Clock;
}

export function createContext(
  request: Request,
  upstream: Upstream,
  config: Pick<Config, 'maxConcurrency' | 'requestDeadlineMs'>,
): GatewayContext {
  const { client } = upstream;
  const auth = readAuthorization(request.headers.get('authorization'));
  const deadline = Date.now() + config.requestDeadlineMs;
  const limit = concurrencyLimit(config.maxConcurrency);
  const usage: Usage = { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
  const onRateLimit = (rateLimit: RateLimit): void => {
    usage.rateLimit = rateLimit;
  };
  // Aborted when the caller goes away: made at the first upstream call, one listener on the request's
  // signal (yoga's, behind a proxy) however many calls follow. The deadline needs no signal: the client
  // gives each attempt only the time left (undici's header and body timeouts) and starts no attempt
  // or retry after it (cheaper than AbortSignal.any and a timer every request).
  let calls: AbortController | undefined;
  const callerGone = (): AbortSignal => {
    if (calls) return calls.signal;
    const controller = (calls = new AbortController());
    if (request.signal.aborted) controller.abort(request.signal.reason);
    else request.signal.addEventListener('abort', () => controller.abort(request.signal.reason), { once: true });
    return controller.signal;
  };

  const send: Send = (call) => {
    if ('problem' in auth) return Promise.reject(new GatewayError('UNAUTHENTICATED', auth.problem));
    const { authorization } = auth;
    return limit(() => {
      usage.upstreamCalls++;
      const { method, path, query, form, notFoundMessage } = call;
      const sent = client.send({ method, path, query, form, notFoundMessage, authorization, signal: callerGone(), deadline, onRateLimit });
      // Reads go through the cache, which sees their answers; a write's success tells it the key is accepted.
      if (method === 'GET') return sent;
      return sent.then((response) => {
        cache.answered();
        return response;
      });
    });
  };

  // Re-validating a key costs the cheapest read there is: the first page of its websites.
  const validate = () => fetchWebsitePage(send, { sortBy: 'id', sort: 'desc', perPage: 10, page: 1 });
  const cache = upstream.cache.forRequest('problem' in auth ? null : auth.authorization, validate, request.signal);
  usage.cache = cache.usage;
  return { loaders: createLoaders(send, upstream.statNames, cache), cache, clock: upstream.clock, send, lookahead: new Map(), usage };
}
