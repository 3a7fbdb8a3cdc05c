// Refuses, before any resolver runs, an operation that could make more upstream calls than the limit:
// the plan adds up the fields' declared costs at execution, since page sizes may come from variables.
import { GraphQLError } from 'graphql';
import type { PlanCheck } from './use-plan.js';
import type { ErrorCode } from '../../errors.js';
import { integer } from '../../settings.js';

export const COST_LIMIT_SETTINGS = {
  maxCost: integer('MAX_COST', {
    fallback: 100,
    min: 1,
    max: 100_000,
    unit: 'upstream calls',
    doc: 'the most upstream calls an operation may be able to make',
  }),
};
export const DEFAULT_COST_LIMIT = COST_LIMIT_SETTINGS.maxCost.fallback;

export function useCostLimit({ limit = DEFAULT_COST_LIMIT }: { limit?: number } = {}): PlanCheck {
  return (plan, context) => {
    const cost = plan.cost();
    // Bad variables: execution refuses them itself.
    if (cost === null) return undefined;
    context.usage.cost = cost;
    if (cost <= limit) return undefined;
    return {
      errors: [
        new GraphQLError(
          `This operation could make ${cost} calls to the analytics service; the limit is ${limit}. ` +
            'Ask for fewer or smaller pages, or split it into several requests.',
          { extensions: { code: 'COST_LIMIT_EXCEEDED' satisfies ErrorCode, cost, costLimit: limit } },
        ),
      ],
      extensions: { cost: { requested: cost, limit }, upstreamCalls: 0 },
    };
  };
}
