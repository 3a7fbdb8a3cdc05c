// What yoga tells the HTTP layer of the request it works on (the request state's RequestWork). Its answer
// is produced: the request's slot frees up then, whatever its reader does (a body streamed as it is made,
// an event stream's or @defer's parts, is still work). And a subscription found only now, by its hash or
// id, leaves its slot for a stream's place (or is refused): every stream is a stream, never a request.
// A subscription whose key the upstream has not accepted lately keeps its slot, in the strangers' line,
// until the live plugin has checked its key (use-live.ts): only a proven key takes a stream's place.
import type { Plugin } from 'graphql-yoga';
import { GatewayError } from '../../errors.js';
import { NOT_STREAMABLE_MESSAGE, streamsSubscription } from '../../http-headers.js';
import type { GatewayServerContext } from '../request-state.js';

/** Why a subscription gets no stream's place. */
export const STREAMS_FULL_MESSAGE =
  'This gateway has all the event streams open it may (LIVE_MAX_STREAMS), or is stopping: subscribe again in a moment.';

export function useWork(): Plugin<GatewayServerContext, GatewayServerContext> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const { request, state } = args.contextValue as GatewayServerContext & { request?: Request };
      const work = state?.work;
      if (work === undefined || work.stream) return;
      if (!streamsSubscription(request?.headers.get('accept') ?? undefined)) {
        setResultAndStopExecution({ errors: [new GatewayError('NOT_ACCEPTABLE', NOT_STREAMABLE_MESSAGE)] });
      } else if (state?.keyKnown === true && !work.becomeStream()) {
        setResultAndStopExecution({ errors: [new GatewayError('OVERLOADED', STREAMS_FULL_MESSAGE)] });
      }
    },
    onResponse({ serverContext, response }) {
      const state = serverContext.state;
      const work = state?.work;
      if (work === undefined || work.stream) return;
      const type = response.headers.get('content-type') ?? '';
      if (type.startsWith('text/event-stream') || type.startsWith('multipart/mixed')) return;
      work.answered(state?.context?.source.keyAccepted() === true);
    },
  };
}
