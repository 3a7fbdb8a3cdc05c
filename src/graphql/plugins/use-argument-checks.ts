// Checks every argument of the operation before any resolver runs, literals and variables alike: one
// refused argument refuses the whole operation, with no upstream call and no partial data (otherwise a
// dashboard with one bad `perPage` would lose its website and every other statistic, after reading
// them). Each field declares its checks where it is defined (`argumentProblems` in its extensions,
// schema/validate.ts); this runs them with the arguments the resolvers will get, variables coerced and
// defaults applied. A mutation's own arguments are the exception: they are answered in its payload's
// userErrors, where a form looks for them, and no write of the operation is sent (schema/website.ts).
import { GraphQLError, Kind, getOperationAST, getVariableValues, type DocumentNode, type FragmentDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { argumentRefusals, type Refusal } from '../../schema/argument-checks.js';
import type { GatewayContext } from '../../schema/context.js';

const fragmentsByDocument = new WeakMap<DocumentNode, Record<string, FragmentDefinitionNode>>();

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  let fragments = fragmentsByDocument.get(document);
  if (fragments === undefined) {
    fragments = {};
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    }
    fragmentsByDocument.set(document, fragments);
  }
  return fragments;
}

function refusalError({ problem, fieldPath, field, argument }: Refusal): GraphQLError {
  const at = fieldPath.join('.');
  return new GraphQLError(`${at}: ${problem.message}`, {
    nodes: argument ?? field,
    extensions: { code: 'BAD_USER_INPUT', argument: problem.field.join('.'), field: at },
  });
}

export function useArgumentChecks(): Plugin<GatewayContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue;
      // One "today" for the whole operation: periods resolved by the look-ahead, the cost count and
      // every resolver (a list of websites, a deferred part) use the instant it started, so a request
      // running across midnight never mixes two days. The checks themselves do not depend on the day.
      const now = context.clock.now();
      context.clock = { timeZone: context.clock.timeZone, now: () => now };

      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return;
      const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
      // Variables that do not coerce: execution refuses them itself, before any resolver runs.
      if (coerced.errors) return;
      const refusals = argumentRefusals({
        schema: args.schema,
        operation,
        fragments: fragmentsOf(args.document),
        variables: coerced.coerced,
      });
      if (refusals.length === 0) return;
      if (operation.operation === 'mutation' && refusals.every((refusal) => refusal.write)) return;
      context.usage.cost = 0;
      setResultAndStopExecution({ errors: refusals.map(refusalError), extensions: { upstreamCalls: 0 } });
    },
  };
}
