// One request's state: made once by the HTTP layer when the request's body is here (http/server.ts), handed
// to whatever answers it (a stored answer, a known operation, yoga as its server context) and to the
// ending that sends the answer (http/answer.ts). Each part is owned by the layer that knows it: the HTTP
// layer's (the key read once, the lane, the operation's kind, the body parsed once when first asked,
// the slot, when it arrived and was admitted, whether it asked for its trace) and the store's (one
// session of cache/: the budget spent, the key's counters, the answer's place). A live poll runs with a
// state of its own, derived from its subscription's.
import { type KeyReading, readAuthorization } from './api-key.js';
import type { StoreSession } from './cache/scope.js';

/** Which line a request waits in (http/admission.ts): a key the upstream accepted lately, another key, or none. */
export type Lane = 'known' | 'stranger' | 'keyless';

/** The kind of operation a request runs, as read before admission (http/operation-type.ts). */
export type OperationType = 'query' | 'mutation' | 'subscription';

/**
 * The request's slot (http/admission.ts) as what answers the request sees it: freed once the answer is made
 * (writing it to a slow reader holds a connection, not a slot), or left for a stream's place.
 */
export interface Slot {
  /** Whether it holds a stream's place (LIVE_MAX_STREAMS), not a request slot. */
  readonly stream: boolean;
  /** The answer is made: the slot is free from now on. `keyAccepted`: the upstream accepted the request's key. */
  free(keyAccepted: boolean): void;
  /**
   * It is a subscription yoga streams: it leaves its slot for a stream's place, bound as every stream is.
   * False when none is free, or the gateway is draining. `keyAccepted`: the upstream accepted its key (the
   * live plugin checked it), which counts as known from now on.
   */
  becomeStream(keyAccepted?: boolean): boolean;
}

/**
 * Made per request with all its properties: they are set and cleared (`= undefined`), never added or
 * deleted (docs/performance.md#garbage).
 */
export interface RequestState {
  /** The key as read from the Authorization header: canonical, or what is wrong with it. */
  readonly credentials: KeyReading;
  /** The canonical key (`Bearer <token>`), or null when the request has none fit to forward. */
  readonly key: string | null;
  /** The line it waits in (http/admission.ts). */
  lane: Lane;
  /**
   * Whether the upstream accepted the key lately, as it stood when the request got its slot: only then
   * does the look-ahead (schema/prefetch.ts) spend upstream calls ahead of the answer that would show the
   * key refused. True for a live poll, whose subscription's key was checked.
   */
  keyKnown: boolean;
  /** The operation's kind as read before admission; null when the request carries no document. */
  readonly operationType: OperationType | null;
  /** The JSON body as an object, parsed once, when first asked; undefined when it is not one (yoga reads its bytes). */
  body(): object | undefined;
  /** Its slot; none for a live poll or a static page. */
  slot: Slot | undefined;
  /** A subscription's poll: it reads today's figures from the upstream, not from an earlier poll's entry. */
  readonly livePoll: boolean;
  /** performance.now() when its body was here, and when it got its slot (the same until then). */
  readonly receivedAt: number;
  admittedAt: number;
  /** It asked for its trace (X-Gateway-Trace: 1, where allowed), and is not a subscription's. */
  readonly traced: boolean;
  /** The store's part of the request, once its stored answer was looked up. */
  store: StoreSession | undefined;
  /** The MCP tool whose call it runs (http-headers.ts TOOL_HEADER), for its log line. */
  readonly tool: string | undefined;
}

/** What the HTTP layer read of a request before making its state. */
export interface Arrival {
  operationType?: OperationType | null;
  /** How to read its JSON body as an object, once. */
  body?: () => object | undefined;
  traced?: boolean;
  lane?: Lane;
  tool?: string;
}

const NO_BODY = (): undefined => undefined;

/** The state of a request that sent `authorization` (the header's value). */
export function newRequestState(authorization: string | null | undefined, arrival: Arrival = {}): RequestState {
  const credentials = readAuthorization(authorization);
  const key = 'authorization' in credentials ? credentials.authorization : null;
  const receivedAt = performance.now();
  let parsed: { body: object | undefined } | undefined;
  const read = arrival.body;
  return {
    credentials,
    key,
    lane: arrival.lane ?? (key === null ? 'keyless' : 'stranger'),
    keyKnown: false,
    operationType: arrival.operationType ?? null,
    body:
      read === undefined
        ? NO_BODY
        : () => {
            parsed ??= { body: read() };
            return parsed.body;
          },
    slot: undefined,
    livePoll: false,
    receivedAt,
    admittedAt: receivedAt,
    traced: arrival.traced ?? false,
    store: undefined,
    tool: arrival.tool,
  };
}

/** The state of one poll of a subscription: its key as the subscription's request read it, and known. */
export function livePollState(credentials: KeyReading): RequestState {
  const receivedAt = performance.now();
  return {
    credentials,
    key: 'authorization' in credentials ? credentials.authorization : null,
    lane: 'known',
    keyKnown: true,
    operationType: 'query',
    body: NO_BODY,
    slot: undefined,
    livePoll: true,
    receivedAt,
    admittedAt: receivedAt,
    traced: false,
    store: undefined,
    tool: undefined,
  };
}
