// Puts in every executed response's `extensions` what the request cost and what the install said:
// `cost: { requested, limit }`, `upstreamCalls`, and `rateLimit: { limit, remaining }` when the
// install reported it, so a frontend can slow down before a 429. With @defer/@stream they come with
// the final part.
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.js';
import { DEFAULT_COST_LIMIT } from './use-cost-limit.js';

export interface UsageExtensionsOptions {
  /** The cost limit reported beside the cost (MAX_COST; default 100). */
  costLimit?: number;
}

export function useUsageExtensions({ costLimit = DEFAULT_COST_LIMIT }: UsageExtensionsOptions = {}): Plugin<GatewayContext> {
  return {
    onExecute: ({ args }) => {
      const figures = (): Record<string, unknown> => {
        const { usage } = args.contextValue;
        return {
          cost: { requested: usage.cost, limit: costLimit },
          upstreamCalls: usage.upstreamCalls,
          cache: { hits: usage.cache.hits, misses: usage.cache.misses, stale: usage.cache.stale },
          ...(usage.cache.stale > 0 ? { stale: true } : {}),
          ...(usage.rateLimit ? { rateLimit: usage.rateLimit } : {}),
        };
      };
      return {
        onExecuteDone: ({ result, setResult }) => {
          if (!(Symbol.asyncIterator in result)) {
            setResult({ ...result, extensions: { ...result.extensions, ...figures() } });
            return undefined;
          }
          // @defer/@stream: the figures are known once everything ran, so they go with the last part.
          return {
            onNext: ({ result: part, setResult: setPart }) => {
              if ('hasNext' in part && part.hasNext === false) setPart({ ...part, extensions: { ...part.extensions, ...figures() } });
            },
          };
        },
      };
    },
  };
}
