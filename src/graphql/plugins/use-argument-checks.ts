// One refused argument refuses the whole operation before any resolver runs: no upstream call, no partial
// data read for nothing. The plan ran each field's declared checks. A mutation's own arguments are
// answered in its payload's userErrors instead, where a form looks for them (schema/website.ts).
import { GraphQLError } from 'graphql';
import type { Refusal } from '../../schema/plan.js';
import type { PlanCheck } from './use-plan.js';
import type { ErrorCode } from '../../errors.js';

function refusalError({ problem, fieldPath, field, argument }: Refusal): GraphQLError {
  const at = fieldPath.join('.');
  return new GraphQLError(`${at}: ${problem.message}`, {
    nodes: argument ?? field,
    extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, argument: problem.field.join('.'), field: at },
  });
}

export function useArgumentChecks(): PlanCheck {
  return (plan, context) => {
    // Variables that do not coerce (no selection): execution refuses them itself.
    const refusals = plan.selection?.refusals() ?? [];
    if (refusals.length === 0) return undefined;
    if (plan.operation.type === 'mutation' && refusals.every((refusal) => refusal.write)) return undefined;
    context.usage.cost = 0;
    return { errors: refusals.map(refusalError), extensions: { upstreamCalls: 0 } };
  };
}
