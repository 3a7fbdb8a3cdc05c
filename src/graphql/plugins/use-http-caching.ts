// What HTTP caches (the browser's, a CDN's) may do with an answer. A query answered without errors may
// be kept `private` (it is one key's data) for as long as the shortest remaining lifetime of the cached
// reads it used; a mutation, an error, or anything not from the cache is `no-store`. Every answer
// varies by Authorization and Origin. A GET query gets an ETag of its data, and a 304 when the client
// already has it (the query still runs: what is saved is the transfer). The ETag is keyed: an HMAC of
// the key and the data with a secret of the gateways (the cache's, shared through Redis, or this
// process's), so that the same data under two keys has two tags, and no header says what the data is
// to whoever sees headers alone (a proxy's logs, a HAR file) and guesses it.
import { createHmac, randomBytes } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import { appendVary, ifNoneMatchHas } from '../../http-headers.js';
import type { GatewayServerContext } from '../request-state.js';
import type { PlanStep } from './use-plan.js';

export interface HttpCachingOptions {
  /** The request's plan, for the operation's type. Required. */
  plan: PlanStep;
  /** The ETags' secret (the cache's, so that gateways sharing a store agree); default one of this process's. */
  etagSecret?: () => string;
}

/** The ETags' secret when the cache gives none: this process's own. */
export function processEtagSecret(): () => string {
  const secret = randomBytes(32).toString('hex');
  return () => secret;
}

export function useHttpCaching({ plan, etagSecret }: HttpCachingOptions): Plugin<GatewayContext, GatewayServerContext> {
  const secret = etagSecret ?? processEtagSecret();
  /** Requests whose operation is a query that ran to a result without errors. */
  const cacheable = new WeakSet<Request>();
  return {
    onExecute({ args }) {
      const isQuery = plan.of(args.contextValue)?.operation.type === 'query';
      return {
        onExecuteDone({ result }) {
          if (isQuery && !(Symbol.asyncIterator in result) && (result.errors ?? []).length === 0) {
            cacheable.add(args.contextValue.request);
          }
        },
      };
    },
    // Not async: only a GET's answer is read (for its ETag); the others need no promise of their own.
    onResponse({ request, response, setResponse, fetchAPI, serverContext }) {
      // The GraphiQL page and the answers before GraphQL (CORS preflights) keep their own headers.
      if (response.headers.has('cache-control') || request.method === 'OPTIONS') return;
      appendVary(response.headers, ['Authorization', 'Origin']);
      const state = serverContext.state;
      // What the request's reads did with the cache (none: nothing ran).
      const freshFor = state?.context?.usage.cache.freshForS ?? null;
      // An answer with its trace (use-request-trace.ts) is this request's alone: kept by nobody.
      if (!cacheable.has(request) || freshFor === null || response.status !== 200 || state?.trace !== undefined) {
        response.headers.set('cache-control', 'no-store');
        return;
      }
      response.headers.set('cache-control', `private, max-age=${freshFor}`);
      if (request.method !== 'GET') return;
      return tagged(state?.key ?? '', response, setResponse, fetchAPI, secret(), request.headers.get('if-none-match'));
    },
  };
}

/** The ETag of an answer's data (as JSON) under a key: keyed by the gateways' secret, weak. */
export function etagOf(secret: string, key: string, dataJson: string): string {
  const tag = createHmac('sha256', secret).update(`${key}\n`).update(dataJson).digest('base64url');
  return `W/"${tag.slice(0, 27)}"`;
}

/** A GET's answer with the ETag of its key and data, or a 304 when the client has it. */
async function tagged(
  key: string,
  response: Response,
  setResponse: (response: Response) => void,
  fetchAPI: { Response: typeof Response },
  secret: string,
  ifNoneMatch: string | null,
): Promise<void> {
  // The ETag covers the data, not the extensions (which count this request's cache hits).
  const text = await response.text();
  let data: unknown;
  try {
    data = (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    setResponse(new fetchAPI.Response(text, { status: 200, headers: response.headers }));
    return;
  }
  const etag = etagOf(secret, key, JSON.stringify(data));
  response.headers.set('etag', etag);
  if (ifNoneMatchHas(ifNoneMatch, etag)) {
    response.headers.delete('content-type');
    response.headers.delete('content-length');
    setResponse(new fetchAPI.Response(null, { status: 304, headers: response.headers }));
    return;
  }
  setResponse(new fetchAPI.Response(text, { status: 200, headers: response.headers }));
}
