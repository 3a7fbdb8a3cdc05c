// One context per GraphQL request: the caller's key (read once, into the request's state) and a fresh
// upstream data source bound to it (upstream/source.ts). Nothing here outlives the request, which is
// what keeps one key's data away from another key. Beside it, the GraphQL layer's own record of the run
// (GraphQLRun): what it ran and what came of it, which it turns into the answer the HTTP layer sends.
import type { ServerResponse } from 'node:http';
import type { GatewayContext, Usage } from '../schema/context.js';
import type { Freshness } from '../cache/read-cache.js';
import { createSource, type RequestBounds, type Upstream } from '../upstream/source.js';
import type { RequestState } from '../request-state.js';
import type { ExecutionResult } from 'graphql';
import { RequestTrace } from '../upstream/request-trace.js';

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
  trace?: RequestTrace,
): GatewayContext {
  const usage: Usage = { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
  const source = createSource(upstream, {
    credentials: state.credentials,
    signal: caller instanceof AbortSignal ? caller : callerLeft(caller),
    deadline: Date.now() + bounds.requestDeadlineMs,
    maxConcurrency: bounds.maxConcurrency,
    usage,
    freshness,
    ...(state.store ? { store: state.store } : {}),
    trace,
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

/** What yoga's server context carries besides node's request and response: the request's state, and this run's record. */
export interface GatewayServerContext {
  state: RequestState;
  run: GraphQLRun;
}

/** The GraphQL layer's record of one run of a request: what it ran and what came of it (answered.ts). */
export interface GraphQLRun {
  /** The GraphQL context, once yoga (or the known operations' path) made it. */
  context: GatewayContext | undefined;
  /** Its own trace of its upstream calls, when the request asked for one. */
  trace: RequestTrace | undefined;
  /** A result the known operations' path ran and hands to yoga to answer (it has errors, which yoga formats). */
  erredResult: { context: GatewayContext; result: ExecutionResult } | undefined;
  /** Its form (text or hash, operation name), when the known operations' path may learn it from yoga's run. */
  form: string | undefined;
  /** The operation as the log names it: the request's operationName, or the document's own name. */
  operation: string | null;
  /** The document's own operation name and type, once it ran. */
  documentName: string | undefined;
  type: 'query' | 'mutation' | 'subscription' | 'unknown';
  /** The code of each error of its result, once a result was made. */
  errorCodes: string[] | undefined;
  /** The data's JSON, made once for the answer's text, for a query's result without errors. */
  data: string | null;
  /** The request's OpenTelemetry trace id, once its span started (use-tracing.ts). */
  traceId: string | undefined;
}

/** A new run of `state`'s request: its trace made when it asked for one. */
export function newRun(state: RequestState): GraphQLRun {
  return {
    context: undefined,
    trace: state.traced ? new RequestTrace(state.receivedAt, state.admittedAt) : undefined,
    erredResult: undefined,
    form: undefined,
    operation: null,
    documentName: undefined,
    type: 'unknown',
    errorCodes: undefined,
    data: null,
    traceId: undefined,
  };
}
