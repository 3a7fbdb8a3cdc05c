// One request's state: made once by the HTTP layer when the request arrives (http/server.ts), handed to
// yoga as its server context (`{ state }`), and read from there by the GraphQL context and the plugins.
// It holds what later steps need to know of the request, so that none reads the request again or passes
// it on through a side table: the key, read once; the admission lane; the body parsed before admission;
// what the stored-answer lookup spent and found; what yoga tells the HTTP layer (RequestWork); and, once
// yoga made it, the GraphQL context. A live poll runs with a state derived from its subscription's.
import { type KeyReading, readAuthorization } from '../api-key.js';
import type { ExecutionResult } from 'graphql';
import type { GatewayContext } from '../schema/context.js';
import type { AnswerSlot } from '../cache/stored-answers.js';
import type { LookedUp } from '../cache/scope.js';
import type { RequestTrace } from '../upstream/request-trace.js';

/** Which line a request waits in (http/admission.ts): a key the upstream accepted lately, another key, or none. */
export type Lane = 'known' | 'stranger' | 'keyless';

/** The kind of operation a request runs, as read before admission (http/operation-type.ts). */
export type OperationType = 'query' | 'mutation' | 'subscription';

/**
 * What yoga tells the HTTP layer of a request it admitted, as it learns it: when its answer is produced,
 * and when a request turns out a subscription's stream (graphql/plugins/use-work.ts).
 */
export interface RequestWork {
  /** Whether it holds a stream's place (LIVE_MAX_STREAMS), not a request slot. */
  readonly stream: boolean;
  /**
   * Its answer is produced: its slot is free from now on (writing the answer out holds the connection
   * only). `keyAccepted`: the upstream accepted the request's key (it answered a call made with it).
   */
  answered(keyAccepted: boolean): void;
  /**
   * It is a subscription yoga streams: it leaves its slot for a stream's place, bound as every stream is.
   * False when none is free, or the gateway is draining. `keyAccepted`: the upstream accepted its key (the
   * live plugin checked it), which counts as known from now on.
   */
  becomeStream(keyAccepted?: boolean): boolean;
}

/**
 * Made per request: its properties are set and cleared (`= undefined`), never deleted. A deleted property
 * (or an accessor) puts the object in V8's dictionary mode, which keeps every young object of the request
 * alive through young collections (docs/performance.md#garbage).
 */
export interface RequestState {
  /** The key as read from the Authorization header: canonical, or what is wrong with it. */
  readonly credentials: KeyReading;
  /** The canonical key (`Bearer <token>`), or null when the request has none fit to forward. */
  readonly key: string | null;
  /** The line it waits in (http/admission.ts). */
  lane: Lane;
  /**
   * Whether the upstream accepted the key lately, as it stood when the request was handed to GraphQL:
   * only then does the look-ahead (schema/prefetch.ts) spend upstream calls ahead of the answer that
   * would show the key refused. True for a live poll, whose subscription's key was checked.
   */
  keyKnown: boolean;
  /** The operation's kind as read before admission; null when the request carries no document. */
  operationType: OperationType | null;
  /** The JSON body as parsed before admission, handed to yoga in place of its bytes (parsed once). */
  parsedBody?: object;
  /**
   * The JSON body was seen lately and known without parsing it (http/operation-type.ts): parsed once,
   * for what runs the operation, if anything does (a stored answer does not).
   */
  parseLater?: boolean;
  /** What the stored-answer lookup spent of the store's budget, and the key's counters it read. */
  lookup?: LookedUp;
  /** Where its answer is stored if it can be, looked up and not found (cache/stored-answers.ts). */
  answerSlot?: AnswerSlot;
  /** The HTTP layer's side of the request's slot; none for a live poll. */
  work?: RequestWork;
  /** A subscription's poll: it reads today's figures from the upstream, not from an earlier poll's entry. */
  readonly livePoll: boolean;
  /** The GraphQL context, once yoga made it: for the steps after execution (caching, logs, metrics). */
  context?: GatewayContext;
  /** The request's OpenTelemetry trace id, once its span started (use-tracing.ts): for the log line. */
  traceId?: string;
  /**
   * Its own trace of its upstream calls, for `extensions.trace`: only when it sent X-Gateway-Trace: 1
   * where that is allowed (graphql/plugins/use-request-trace.ts); never for a live poll.
   */
  trace?: RequestTrace;
  /**
   * A result the known-operations path ran and hands to yoga to answer (it has errors, which yoga formats):
   * yoga takes its context and answers the result, running nothing again (graphql/known-operations.ts).
   */
  handover?: { context: GatewayContext; result: ExecutionResult };
  /** Its form (text or hash, operation name), when the known-operations path may learn it from yoga's run. */
  knownForm?: string;
  /** The MCP tool whose call it runs (http-headers.ts TOOL_HEADER), for its log line. */
  tool?: string;
}

/** The state of a request that sent `authorization` (the header's value): its key read, nothing else known yet. */
export function newRequestState(authorization: string | null | undefined): RequestState {
  const credentials = readAuthorization(authorization);
  const key = 'authorization' in credentials ? credentials.authorization : null;
  return { credentials, key, lane: key === null ? 'keyless' : 'stranger', keyKnown: false, operationType: null, livePoll: false };
}

/** The state of one poll of a subscription: its key as the subscription's request read it, and known. */
export function livePollState(credentials: KeyReading): RequestState {
  return {
    credentials,
    key: 'authorization' in credentials ? credentials.authorization : null,
    lane: 'known',
    keyKnown: true,
    operationType: 'query',
    livePoll: true,
  };
}

/** What yoga's server context carries besides node's request and response. */
export interface GatewayServerContext {
  /** None only for a request handed to yoga by something other than the HTTP layer or a live poll (tests). */
  state?: RequestState;
}

/**
 * The request's state. A request handed to yoga in process by something else than the HTTP layer (a
 * test) gets one read from its headers now, its key taken as known: no admission stood in its way.
 */
export function stateOf(serverContext: GatewayServerContext, request: Request): RequestState {
  serverContext.state ??= { ...newRequestState(request.headers.get('authorization')), keyKnown: true };
  return serverContext.state;
}
