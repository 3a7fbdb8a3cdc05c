// `X-Gateway-Trace: 1` gets, in `extensions.trace`, what the request did upstream (docs/trace.md): with
// the result, or the last part of an incremental one. An answer with a trace is `no-store`, so it is
// neither kept by a browser nor stored for the next caller.
import type { ExecutionResult } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import { type SettingsOf, choice } from '../../settings.js';
import type { RequestTrace } from '../../upstream/request-trace.js';
import type { GatewayServerContext } from '../context.js';

export const REQUEST_TRACE_SETTINGS = {
  trace: choice('TRACE', ['auto', 'allow', 'deny'], {
    fallback: 'auto',
    doc: '`X-Gateway-Trace: 1` gets `extensions.trace`; auto: when introspection is on, outside production; allow: also in production',
  }),
};

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
        onExecuteDone: (payload) =>
          handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
            // @defer/@stream: the calls are all made once the last part is.
            if (!('hasNext' in result) || result.hasNext === false) setResult(withTrace(result, trace));
          }),
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
