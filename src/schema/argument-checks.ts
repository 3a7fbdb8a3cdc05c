// Every refused argument of an operation, from the checks each field declares where it is defined
// (`argumentProblems` in its extensions: validate.ts). graphql/plugins/use-argument-checks.ts runs them
// before any resolver; a mutation's resolver asks whether another write of its operation was refused
// (website.ts), so that no operation is half applied.
import {
  Kind,
  getArgumentValues,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  typeFromAST,
  type ArgumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isIncluded } from './directives.js';
import type { Problem } from './validate.js';

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
