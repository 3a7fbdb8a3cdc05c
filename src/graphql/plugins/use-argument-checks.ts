// Refuses an operation with a refused argument before any resolver runs, literals and variables alike:
// one refused argument refuses the whole operation, with no upstream call and no partial data (otherwise a
// dashboard with one bad `perPage` would lose its website and every other statistic, after reading
// them). Each field declares its checks where it is defined (`argumentProblems` in its extensions,
// schema/validate.ts); the request's plan ran them with the arguments the resolvers will get. A
// mutation's own arguments are the exception: they are answered in its payload's userErrors, where a
// form looks for them, and no write of the operation is sent (schema/website.ts).
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
    // Variables that do not coerce (no selection): execution refuses them itself, before any resolver runs.
    const refusals = plan.selection?.refusals() ?? [];
    if (refusals.length === 0) return undefined;
    if (plan.operation.type === 'mutation' && refusals.every((refusal) => refusal.write)) return undefined;
    context.usage.cost = 0;
    return { errors: refusals.map(refusalError), extensions: { upstreamCalls: 0 } };
  };
}
