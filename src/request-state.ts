// One request's state, made once by http/server.ts when its body is here, each part owned by the layer
// that knows it (docs/architecture.md, the request state). A live poll has a state of its own.
import { type KeyReading, readAuthorization } from './api-key.js';
import type { StoreSession } from './cache/scope.js';

/** A key the upstream accepted lately, another key, or none. */
export type Lane = 'known' | 'stranger' | 'keyless';

export type OperationType = 'query' | 'mutation' | 'subscription';

/** Freed once the answer is made (writing it to a slow reader holds a connection, not a slot). */
export interface Slot {
  /** It holds a stream's place (LIVE_MAX_STREAMS), not a request slot. */
  readonly stream: boolean;
  free(keyAccepted: boolean): void;
  /** A subscription leaves its slot for a stream's place: false when none is free, or the gateway is draining. */
  becomeStream(keyAccepted?: boolean): boolean;
}

/** Its properties are set and cleared (`= undefined`), never added or deleted (docs/performance.md#garbage). */
export interface RequestState {
  readonly credentials: KeyReading;
  /** Canonical (`Bearer <token>`), or null when the request has none fit to forward. */
  readonly key: string | null;
  lane: Lane;
  /** The upstream accepted the key lately: only then does the look-ahead spend calls ahead of the answer. */
  keyKnown: boolean;
  /** null when the request carries no document. */
  readonly operationType: OperationType | null;
  /** Parsed once, when first asked; undefined when it is not an object (yoga reads its bytes). */
  body(): object | undefined;
  /** None for a live poll or a static page. */
  slot: Slot | undefined;
  /** It reads today's figures from the upstream, not from an earlier poll's entry. */
  readonly livePoll: boolean;
  /** performance.now() when its body was here, and when it got its slot. */
  readonly receivedAt: number;
  admittedAt: number;
  /** X-Gateway-Trace: 1, where allowed; never a subscription's. */
  readonly traced: boolean;
  /** Once its stored answer was looked up. */
  store: StoreSession | undefined;
  /** The MCP tool whose call it runs (TOOL_HEADER), for its log line. */
  readonly tool: string | undefined;
}

/** What the HTTP layer read of a request before making its state. */
export interface Arrival {
  operationType?: OperationType | null;
  body?: () => object | undefined;
  traced?: boolean;
  lane?: Lane;
  tool?: string;
}

const NO_BODY = (): undefined => undefined;

export function newRequestState(authorization: string | null | undefined, arrival: Arrival = {}): RequestState {
  return stateOf(readAuthorization(authorization), arrival, false);
}

/** Its key as the subscription's request read it, and known. */
export function livePollState(credentials: KeyReading): RequestState {
  return stateOf(credentials, { lane: 'known', operationType: 'query' }, true);
}

function stateOf(credentials: KeyReading, arrival: Arrival, livePoll: boolean): RequestState {
  const key = 'authorization' in credentials ? credentials.authorization : null;
  const receivedAt = performance.now();
  let parsed: { body: object | undefined } | undefined;
  const read = arrival.body;
  return {
    credentials,
    key,
    lane: arrival.lane ?? (key === null ? 'keyless' : 'stranger'),
    keyKnown: livePoll,
    operationType: arrival.operationType ?? null,
    body:
      read === undefined
        ? NO_BODY
        : () => {
            parsed ??= { body: read() };
            return parsed.body;
          },
    slot: undefined,
    livePoll,
    receivedAt,
    admittedAt: receivedAt,
    traced: arrival.traced ?? false,
    store: undefined,
    tool: arrival.tool,
  };
}
