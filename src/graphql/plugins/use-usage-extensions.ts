// Puts in every response's `extensions` what the request cost and what the upstream said (`rateLimit`,
// so a frontend can slow down before a 429). An answer given before anything ran says so with zeros.
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { GatewayContext, Usage } from '../../schema/context.js';
import type { GatewayServerContext } from '../context.js';
import { DEFAULT_COST_LIMIT } from './use-cost-limit.js';

/** `usage`: none when nothing ran. */
export function usageFigures(usage: Usage | undefined, costLimit: number): Record<string, unknown> {
  return {
    cost: { requested: usage?.cost ?? 0, limit: costLimit },
    upstreamCalls: usage?.upstreamCalls ?? 0,
    cache: { hits: usage?.cache.hits ?? 0, misses: usage?.cache.misses ?? 0, stale: usage?.cache.stale ?? 0 },
    ...(usage !== undefined && usage.cache.stale > 0 ? { stale: true } : {}),
    rateLimit: usage?.rateLimit ?? undefined,
  };
}

export function useUsageExtensions({
  costLimit = DEFAULT_COST_LIMIT,
}: {
  costLimit?: number;
} = {}): Plugin<GatewayContext, GatewayServerContext> {
  const figures = (usage: Usage | undefined): Record<string, unknown> => usageFigures(usage, costLimit);
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: (payload) =>
        handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
          // @defer/@stream: the figures are known once everything ran, so they go with the last part.
          if ('hasNext' in result && result.hasNext !== false) return;
          setResult({ ...result, extensions: { ...result.extensions, ...figures(args.contextValue.usage) } });
        }),
    }),
    // Answers that execution did not give: refused while parsing or validating, or before.
    onResultProcess({ result, setResult, serverContext }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.extensions !== undefined && 'upstreamCalls' in result.extensions) return;
      setResult({ ...result, extensions: { ...result.extensions, ...figures(serverContext.run.context?.usage) } });
    },
  };
}
