// A subscription found only now (by hash or id) leaves its slot for a stream's place, or is refused. One
// whose key is not known keeps its slot until use-live.ts has checked the key.
import type { Plugin } from 'graphql-yoga';
import { GatewayError } from '../../errors.js';
import { NOT_STREAMABLE_MESSAGE, streamsSubscription } from '../../http-headers.js';
import type { GatewayServerContext } from '../context.js';

export const STREAMS_FULL_MESSAGE =
  'This gateway has all the event streams open it may (LIVE_MAX_STREAMS), or is stopping: subscribe again in a moment.';

export function useWork(): Plugin<GatewayServerContext, GatewayServerContext> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const { request, state } = args.contextValue as GatewayServerContext & { request?: Request };
      const slot = state.slot;
      if (slot === undefined || slot.stream) return;
      if (!streamsSubscription(request?.headers.get('accept') ?? undefined)) {
        setResultAndStopExecution({ errors: [new GatewayError('NOT_ACCEPTABLE', NOT_STREAMABLE_MESSAGE)] });
      } else if (state.keyKnown && !slot.becomeStream()) {
        setResultAndStopExecution({ errors: [new GatewayError('OVERLOADED', STREAMS_FULL_MESSAGE)] });
      }
    },
  };
}
