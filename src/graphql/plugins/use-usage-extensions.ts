// Puts in every response's `extensions` what the request cost and what the upstream said:
// `cost: { requested, limit }`, `upstreamCalls`, `cache`, and `rateLimit: { limit, remaining }` when
// the upstream reported it, so a frontend can slow down before a 429. With @defer/@stream they come with
// the final part. An answer given before anything ran (a document that does not parse, a limit or a
// validation rule refusing it, a missing operation name) says so with zeros.
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext, Usage } from '../../schema/context.js';
import type { GatewayServerContext } from '../context.js';
import { DEFAULT_COST_LIMIT } from './use-cost-limit.js';

export interface UsageExtensionsOptions {
  /** The cost limit reported beside the cost (MAX_COST; default DEFAULT_COST_LIMIT). */
  costLimit?: number;
}

/** The figures of a request's usage (none: nothing ran), as `extensions` carries them. */
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
}: UsageExtensionsOptions = {}): Plugin<GatewayContext, GatewayServerContext> {
  const figures = (usage: Usage | undefined): Record<string, unknown> => usageFigures(usage, costLimit);
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!(Symbol.asyncIterator in result)) {
          setResult({ ...result, extensions: { ...result.extensions, ...figures(args.contextValue.usage) } });
          return undefined;
        }
        // @defer/@stream: the figures are known once everything ran, so they go with the last part.
        return {
          onNext: ({ result: part, setResult: setPart }) => {
            if ('hasNext' in part && part.hasNext === false)
              setPart({ ...part, extensions: { ...part.extensions, ...figures(args.contextValue.usage) } });
          },
        };
      },
    }),
    // Answers that execution did not give: refused while parsing or validating, or before.
    // The request's context, if it got one (none when nothing ran), from its state.
    onResultProcess({ result, setResult, serverContext }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.extensions !== undefined && 'upstreamCalls' in result.extensions) return;
      setResult({ ...result, extensions: { ...result.extensions, ...figures(serverContext.run.context?.usage) } });
    },
  };
}
