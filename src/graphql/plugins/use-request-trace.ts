// A request that sends `X-Gateway-Trace: 1` gets, in `extensions.trace`, what it did upstream: each call
// it sent and each read the cache answered, with its timing, what the cache did and the fields that
// asked for it, and its totals (upstream/request-trace.ts; docs/trace.md). The run has a trace when the
// request asked for one where traces are allowed (TRACE); this step puts it in the answer: with the
// result, or with the last part of an incremental one. A subscription's events carry none. An answer
// with a trace is `no-store` (http/answer.ts), so it is neither kept by a browser nor stored for the
// next caller (cache/stored-answers.ts).
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import { type SettingsOf, choice } from '../../settings.js';
import type { RequestTrace } from '../../upstream/request-trace.js';
import type { GatewayServerContext } from '../context.js';

/** Where the header is heard. */
export const REQUEST_TRACE_SETTINGS = {
  trace: choice('TRACE', ['auto', 'allow', 'deny'], {
    fallback: 'auto',
    doc: '`X-Gateway-Trace: 1` gets `extensions.trace`; auto: when introspection is on, outside production; allow: also in production',
  }),
};

/** Whether a request's X-Gateway-Trace is heard: TRACE=allow, or (auto) introspection on outside production. */
export function tracesAllowed(
  config: SettingsOf<typeof REQUEST_TRACE_SETTINGS> & { introspection: boolean; production: boolean },
): boolean {
  return config.trace === 'allow' || (config.trace === 'auto' && config.introspection && !config.production);
}

function withTrace<R extends ExecutionResult>(result: R, trace: RequestTrace): R {
  return { ...result, extensions: { ...result.extensions, trace: trace.render() } };
}

export function useRequestTrace(): Plugin<GatewayContext, GatewayServerContext> {
  return {
    onExecute({ args }) {
      const trace = (args.contextValue as unknown as GatewayServerContext).run.trace;
      if (trace === undefined) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) {
            setResult(withTrace(result, trace));
            return undefined;
          }
          // @defer/@stream: the calls are all made once the last part is.
          return {
            onNext({ result: part, setResult: setPart }) {
              if ('hasNext' in part && part.hasNext === false) setPart(withTrace(part, trace));
            },
          };
        },
      };
    },
    // Answers that execution did not give (refused while parsing or validating, or before): a trace all the same.
    onResultProcess({ result, setResult, serverContext }) {
      const trace = serverContext.run.trace;
      if (trace === undefined || Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.extensions !== undefined && 'trace' in result.extensions) return;
      setResult(withTrace(result, trace));
    },
  };
}
