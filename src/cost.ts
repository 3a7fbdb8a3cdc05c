// What a GraphQL operation will cost upstream, counted before it runs. Each field that makes a REST
// call costs 1, times the page size of every `websites` list it sits under, since it runs once per
// listed website. Variables, fragments, defaults and @skip/@include are taken into account, so the
// figure is the most calls the operation can make (deduplication may make it fewer).
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  isObjectType,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * Upstream calls a field makes each time it resolves. Every mutation field makes one too. Query.stats
 * also reads its website, to check that the caller owns it.
 */
const UPSTREAM_FIELDS = new Map([
  ['Query.website', 1],
  ['Query.websites', 1],
  ['Query.stats', 2],
  ['Website.stats', 1],
]);
/** Fields whose children run once per item: the list's page size multiplies them. */
const LIST_FIELDS = new Set(['Query.websites']);

/** The page size a list was asked for; the largest allowed when it cannot be read (fail safe). */
function pageSize(read: () => unknown): number {
  try {
    const perPage = read();
    return typeof perPage === 'number' && perPage > 0 ? perPage : 10;
  } catch {
    return 100;
  }
}

export function operationCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;

  const included = (node: Parameters<typeof getDirectiveValues>[1]): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  const costOf = (type: GraphQLObjectType, selectionSet: SelectionSetNode, seen: Set<string>): number => {
    let total = 0;
    for (const node of selectionSet.selections) {
      if (!included(node)) continue;
      if (node.kind === Kind.INLINE_FRAGMENT) {
        const inner = node.typeCondition ? schema.getType(node.typeCondition.name.value) : type;
        if (isObjectType(inner)) total += costOf(inner, node.selectionSet, seen);
        continue;
      }
      if (node.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments[node.name.value];
        const inner = fragment && schema.getType(fragment.typeCondition.name.value);
        // `seen` guards against fragment cycles, which validation would refuse anyway.
        if (fragment && isObjectType(inner) && !seen.has(fragment.name.value)) {
          total += costOf(inner, fragment.selectionSet, new Set([...seen, fragment.name.value]));
        }
        continue;
      }
      const field = type.getFields()[node.name.value];
      if (!field) continue; // __typename, or a field validation has already refused
      const coordinate = `${type.name}.${field.name}`;
      const own = UPSTREAM_FIELDS.get(coordinate) ?? (operation.operation === 'mutation' && type === root ? 1 : 0);
      const childType = getNamedType(field.type);
      let children = node.selectionSet && isObjectType(childType) ? costOf(childType, node.selectionSet, seen) : 0;
      if (LIST_FIELDS.has(coordinate) && children > 0) {
        children *= pageSize(() => getArgumentValues(field, node, variables).perPage);
      }
      total += own + children;
    }
    return total;
  };

  return costOf(root, operation.selectionSet, new Set());
}
