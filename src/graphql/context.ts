// One context per GraphQL request, with a fresh upstream source bound to the caller's key: nothing here
// outlives the request, which keeps one key's data away from another's.
import type { ServerResponse } from 'node:http';
import type { GatewayContext, Usage } from '../schema/context.js';
import type { Freshness } from '../cache/read-cache.js';
import { createSource, type RequestBounds, type Upstream } from '../upstream/source.js';
import type { RequestState } from '../request-state.js';
import type { ExecutionResult } from 'graphql';
import { RequestTrace } from '../upstream/request-trace.js';

/** Aborted when the client leaves first; @whatwg-node's `request.signal` is a Proxy, slow on every property. */
function callerLeft(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed && !res.writableFinished) controller.abort(res.errored ?? undefined);
  else res.once('close', () => (res.writableFinished ? undefined : controller.abort(res.errored ?? undefined)));
  return controller.signal;
}

/** `caller`: its HTTP answer, or a live poll's signal. */
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
  // One "today" for the whole request: one running across midnight never mixes two days.
  const now = upstream.clock.now();
  return {
    source,
    clock: { timeZone: upstream.clock.timeZone, now: () => now },
    lookahead: new Map(),
    keyKnown: state.keyKnown,
    usage,
  };
}

export interface GatewayServerContext {
  state: RequestState;
  run: GraphQLRun;
}

/** The GraphQL layer's record of one run of a request: what it ran and what came of it (AnswerFacts). */
export interface GraphQLRun {
  context: GatewayContext | undefined;
  trace: RequestTrace | undefined;
  /** A result of the known operations' path with errors, handed to yoga to format. */
  erredResult: { context: GatewayContext; result: ExecutionResult } | undefined;
  form: string | undefined;
  operation: string | null;
  documentName: string | undefined;
  type: 'query' | 'mutation' | 'subscription' | 'unknown';
  errorCodes: string[] | undefined;
  data: string | null;
  traceId: string | undefined;
}
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
