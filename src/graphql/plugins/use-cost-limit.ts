// Refuses, before any resolver runs, an operation that could make more upstream calls than the limit.
// Each field declares its cost where it is defined (schema/, Pothos's complexity plugin); this adds
// them up for the operation that is about to run, with its variables. It runs at execution rather
// than validation because page sizes may come from variables.
import { complexityFromQuery } from '@pothos/plugin-complexity';
import {
  GraphQLError,
  Kind,
  getOperationAST,
  getVariableValues,
  visit,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import { isIncluded, usesDirective } from '../../schema/directives.js';

export interface CostLimitOptions {
  /** Most upstream calls one operation may be able to make (MAX_COST; default 100). */
  limit?: number;
}

export const DEFAULT_COST_LIMIT = 100;

/** Whether a document holds @skip or @include (then what it runs depends on the variables). */
const conditionalDocuments = new WeakMap<DocumentNode, boolean>();
/** The measured document of an operation whose document has neither (it is the same every time). */
const measuredOperations = new WeakMap<OperationDefinitionNode, DocumentNode>();

/** Whether a document holds @skip or @include (remembered per parsed document). */
export function isConditional(document: DocumentNode): boolean {
  let conditional = conditionalDocuments.get(document);
  if (conditional === undefined) conditionalDocuments.set(document, (conditional = usesDirective(document, ['skip', 'include'])));
  return conditional;
}

/**
 * The operation to measure, alone with its fragments, without what costs nothing by definition or
 * will not run: introspection and `__typename` (clients add it everywhere), and what @skip/@include
 * leave out with these variables. Made once per operation when the document has no @skip/@include
 * (yoga hands the same parsed document to repeated requests): pruning is most of the count's work.
 */
function measuredDocument(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): DocumentNode {
  const conditional = isConditional(document);
  const known = conditional ? undefined : measuredOperations.get(operation);
  if (known) return known;
  const fragments = document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  const prune: ASTVisitor = {
    Field: (node) => (node.name.value.startsWith('__') || !isIncluded(node, variables) ? null : undefined),
    FragmentSpread: (node) => (isIncluded(node, variables) ? undefined : null),
    InlineFragment: (node) => (isIncluded(node, variables) ? undefined : null),
  };
  const measured = visit({ kind: Kind.DOCUMENT, definitions: [operation, ...fragments] }, prune);
  if (!conditional) measuredOperations.set(operation, measured);
  return measured;
}

/** The most upstream calls `operation` can make (deduplication may make it fewer). */
export function operationCost(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  schema: GraphQLSchema,
  context: object,
): number | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  // Bad variables: execution refuses them itself, with no resolver run and no upstream call.
  if (coerced.errors) return null;
  return complexityFromQuery(measuredDocument(document, operation, coerced.coerced), { schema, ctx: context, variables }).complexity;
}

export function useCostLimit({ limit = DEFAULT_COST_LIMIT }: CostLimitOptions = {}): Plugin<GatewayContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cost = operationCost(args.document, args.operationName, args.variableValues ?? {}, args.schema, args.contextValue);
      if (cost === null) return;
      args.contextValue.usage.cost = cost;
      if (cost > limit) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `This operation could make ${cost} calls to the analytics service; the limit is ${limit}. ` +
                'Ask for fewer or smaller pages, or split it into several requests.',
              { extensions: { code: 'COST_LIMIT_EXCEEDED', cost, costLimit: limit } },
            ),
          ],
          extensions: { cost: { requested: cost, limit }, upstreamCalls: 0 },
        });
      }
    },
  };
}
