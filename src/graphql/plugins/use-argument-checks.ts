// Checks every argument of the operation before any resolver runs, literals and variables alike: one
// refused argument refuses the whole operation, with no upstream call and no partial data (otherwise a
// dashboard with one bad `perPage` would lose its website and every other statistic, after reading
// them). Each field declares its checks where it is defined (`argumentProblems` in its extensions,
// schema/validate.ts); this runs them with the arguments the resolvers will get, variables coerced and
// defaults applied. A mutation's own arguments are the exception: they are answered in its payload's
// userErrors, where a form looks for them, and no write of the operation is sent (schema/website.ts).
import {
  GraphQLError,
  Kind,
  getArgumentValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  typeFromAST,
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Problem } from '../../schema/validate.js';
import type { GatewayContext } from '../context.js';
import { isIncluded } from '../directives.js';

/** One refused argument of one field of the operation. */
export interface Refusal {
  problem: Problem;
  /** Response keys from the root to the field (aliases, no list indices): where it would be in `data`. */
  fieldPath: string[];
  field: FieldNode;
  /** The argument at fault as written, when it is (a missing `to` is not). */
  argument: ArgumentNode | undefined;
  /** A mutation's own argument: answered in its payload's userErrors. */
  write: boolean;
}

export interface CheckedOperation {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Readonly<Record<string, FragmentDefinitionNode | undefined>>;
  /** Coerced, as execution gives them to resolvers. */
  variables: Readonly<Record<string, unknown>>;
}

/** An operation without variables refuses the same arguments every time (yoga reuses parsed documents). */
const refusalsWithoutVariables = new WeakMap<OperationDefinitionNode, Refusal[]>();

/**
 * Every refused argument of the operation, in document order. Each fragment is walked once, where it
 * is first spread (and included): its arguments are the same wherever it is spread, and a fragment
 * that spreads the next one twice, thirty deep, would otherwise be walked 2^30 times.
 */
export function argumentRefusals({ schema, operation, fragments, variables }: CheckedOperation): Refusal[] {
  const cacheable = (operation.variableDefinitions ?? []).length === 0;
  const known = cacheable ? refusalsWithoutVariables.get(operation) : undefined;
  if (known) return known;
  const refusals: Refusal[] = [];
  const mutationType = schema.getMutationType();
  const walkedFragments = new Set<string>();

  const walk = (parent: GraphQLCompositeType, selectionSet: SelectionSetNode, path: string[]): void => {
    for (const node of selectionSet.selections) {
      if (!isIncluded(node, variables)) continue;
      if (node.kind === Kind.FIELD) {
        // __typename and introspection fields are not in getFields(): they have nothing to check.
        const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
        if (field === undefined) continue;
        const fieldPath = [...path, (node.alias ?? node.name).value];
        const check = field.extensions.argumentProblems;
        if (check) {
          let args: Record<string, unknown> | undefined;
          try {
            args = getArgumentValues(field, node, variables);
          } catch {
            args = undefined; // not a value of the argument's type: execution refuses it itself
          }
          for (const problem of args ? check(args) : []) {
            const argument = node.arguments?.find((written) => written.name.value === problem.field[0]);
            refusals.push({ problem, fieldPath, field: node, argument, write: parent === mutationType });
          }
        }
        const type = getNamedType(field.type);
        if (node.selectionSet && isCompositeType(type)) walk(type, node.selectionSet, fieldPath);
      } else if (node.kind === Kind.INLINE_FRAGMENT) {
        const type = node.typeCondition ? typeFromAST(schema, node.typeCondition) : parent;
        if (isCompositeType(type)) walk(type, node.selectionSet, path);
      } else if (!walkedFragments.has(node.name.value)) {
        walkedFragments.add(node.name.value);
        const fragment = fragments[node.name.value];
        const type = fragment ? typeFromAST(schema, fragment.typeCondition) : undefined;
        if (fragment && isCompositeType(type)) walk(type, fragment.selectionSet, path);
      }
    }
  };

  const root = schema.getRootType(operation.operation);
  if (root) walk(root, operation.selectionSet, []);
  if (cacheable) refusalsWithoutVariables.set(operation, refusals);
  return refusals;
}

/**
 * Another write of this resolver's operation whose arguments are refused, if there is one: then this
 * write is not sent either, so that an operation is never half applied because of a refused argument.
 */
export function otherRefusedWrite(info: GraphQLResolveInfo): Refusal | undefined {
  const { schema, operation, fragments, variableValues: variables } = info;
  return argumentRefusals({ schema, operation, fragments, variables }).find(
    (refusal) => refusal.write && !info.fieldNodes.includes(refusal.field),
  );
}

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
      const refusals = argumentRefusals({ schema: args.schema, operation, fragments: fragmentsOf(args.document), variables: coerced.coerced });
      if (refusals.length === 0) return;
      if (operation.operation === 'mutation' && refusals.every((refusal) => refusal.write)) return;
      context.usage.cost = 0;
      setResultAndStopExecution({ errors: refusals.map(refusalError), extensions: { upstreamCalls: 0 } });
    },
  };
}
