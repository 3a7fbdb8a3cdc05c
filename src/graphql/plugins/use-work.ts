// What yoga tells the HTTP layer of the request it works on (http/server.ts: RequestWork). Its answer is
// produced: the request's slot frees up then, whatever its reader does (a body streamed as it is made, an
// event stream's or @defer's parts, is still work). And a subscription found only now, by its hash or
// id, leaves its slot for a stream's place (or is refused): every stream is a stream, never a request.
// A subscription whose key the install has not accepted lately keeps its slot, in the strangers' line,
// until the live plugin has checked its key (use-live.ts): only a proven key takes a stream's place.
import type { Plugin } from 'graphql-yoga';
import { GatewayError } from '../../errors.js';

/**
 * What yoga (requestWork) tells the HTTP layer (http/server.ts) of a request it admitted, as it
 * learns it: when its answer is produced, and when a request turns out a subscription's stream.
 */
export interface RequestWork {
  /** Whether it holds a stream's place (LIVE_MAX_STREAMS), not a request slot. */
  readonly stream: boolean;
  /**
   * Whether the install accepted its key lately (http/known-keys.ts): only then does the look-ahead
   * (schema/prefetch.ts) spend upstream calls ahead of the answer that would show the key refused.
   */
  readonly keyKnown: boolean;
  /**
   * Its answer is produced: its slot is free from now on (writing the answer out holds the connection
   * only). `keyAccepted`: the install accepted the request's key (it answered a call made with it).
   */
  answered(keyAccepted: boolean): void;
  /**
   * It is a subscription yoga streams: it leaves its slot for a stream's place, bound as every stream is.
   * False when none is free, or the gateway is draining. `keyAccepted`: the install accepted its key (the
   * live plugin checked it), which counts as known from now on.
   */
  becomeStream(keyAccepted?: boolean): boolean;
}

/** Why a subscription that cannot be streamed is refused, by the HTTP layer (406) or here. */
export const NOT_STREAMABLE_MESSAGE = 'A subscription is answered as an event stream: send it with "Accept: text/event-stream".';

/** Why a subscription gets no stream's place. */
export const STREAMS_FULL_MESSAGE =
  'This gateway has all the event streams open it may (LIVE_MAX_STREAMS), or is stopping: subscribe again in a moment.';

/**
 * Whether yoga answers a subscription to a request with this Accept as an event stream: a subscription's
 * result is a stream, which of yoga's result processors only SSE takes, when one of the accepted media
 * types (utf-8 only; a missing Accept is `*\/*`) matches text/event-stream. Otherwise yoga answers 406:
 * such a subscription cannot be streamed, and the gateway refuses it at once.
 */
export function streamsSubscription(accept: string | undefined): boolean {
  return (accept || '*/*')
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .some((entry) => {
      const [mediaType = '', ...params] = entry.split(';');
      const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
      return charset === 'charset=utf-8' && matches(mediaType, 'text/event-stream');
    });
}

/** yoga's isMatchingMediaType: `asked` may have wildcards (`*\/*`, `text/*`). */
function matches(asked: string, mediaType: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = mediaType.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/**
 * The work of each request the HTTP layer hands yoga (gateway.ts sets it), found by its node request (the
 * server context's `req`). Not in yoga's server context itself: with more than one part, @whatwg-node copies
 * every part's property descriptors into a new object for each request.
 */
export const requestWork = new WeakMap<object, RequestWork>();

export const workOf = (context: { req?: object }): RequestWork | undefined =>
  context.req === undefined ? undefined : requestWork.get(context.req);

/** Whether the HTTP layer knows the request's key (RequestWork.keyKnown); true for work it did not hand over (a live poll). */
export const keyKnownOf = (context: { req?: object }): boolean => workOf(context)?.keyKnown ?? true;

export function useWork(keyAccepted: (request: Request) => boolean): Plugin<{ req?: object }, { req?: object }> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const { request } = args.contextValue as { request?: Request };
      const work = workOf(args.contextValue);
      if (work === undefined || work.stream) return;
      if (!streamsSubscription(request?.headers.get('accept') ?? undefined)) {
        setResultAndStopExecution({ errors: [new GatewayError('NOT_ACCEPTABLE', NOT_STREAMABLE_MESSAGE)] });
      } else if (work.keyKnown && !work.becomeStream()) {
        setResultAndStopExecution({ errors: [new GatewayError('OVERLOADED', STREAMS_FULL_MESSAGE)] });
      }
    },
    onResponse({ serverContext, request, response }) {
      const work = workOf(serverContext);
      if (work === undefined || work.stream) return;
      const type = response.headers.get('content-type') ?? '';
      if (type.startsWith('text/event-stream') || type.startsWith('multipart/mixed')) return;
      work.answered(keyAccepted(request));
    },
  };
}
