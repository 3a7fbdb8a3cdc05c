// Our own yoga plugins: the upstream-cost limit, and the figures every response carries.
import { GraphQLError, Kind, getOperationAST, getVariableValues, type FragmentDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from './context.js';
import { operationCost } from './cost.js';

/**
 * Refuses, before any resolver runs, an operation that could make more upstream calls than `limit`.
 * It runs at execution rather than validation because page sizes may come from variables.
 */
export function costLimit(limit: number): Plugin<GatewayContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return;
      const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
      // Bad variables: execution refuses them itself, with no resolver run and no upstream call.
      if (coerced.errors) return;
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const definition of args.document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
      }
      const cost = operationCost(args.schema, operation, fragments, coerced.coerced);
      args.contextValue.cost = cost;
      if (cost > limit) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `This operation could make ${cost} calls to the analytics service; the limit is ${limit}. ` +
                'Ask for fewer or smaller pages, or split it into several requests.',
              { extensions: { code: 'BAD_USER_INPUT', cost, costLimit: limit } },
            ),
          ],
          extensions: { cost: { requested: cost, limit }, upstreamCalls: 0 },
        });
      }
    },
  };
}

/** Puts the operation's cost and the upstream calls it made in the response's `extensions`. */
export function costExtensions(limit: number): Plugin<GatewayContext> {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (Symbol.asyncIterator in result) return;
        setResult({
          ...result,
          extensions: {
            ...result.extensions,
            cost: { requested: args.contextValue.cost, limit },
            upstreamCalls: args.contextValue.upstreamCalls(),
          },
        });
      },
    }),
  };
}
