// Look-ahead for `website(id) { stats(...) }`: the stats only need the id, which is already in the
// arguments, so they are started together with the website instead of after it. That turns two
// upstream round trips into one. Website.stats later finds the query and the page's promise here
// (lookedAhead), and other fields asking the same page find it in the loader cache.
import {
  Kind,
  getArgumentValues,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLResolveInfo,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { StatsQuery } from '../domain.js';
import type { GatewayContext, LookedAhead } from './context.js';
import { isIncluded } from './directives.js';
import { statsQuery, type StatArgs } from './stat.js';

/** Arguments written in the document without variables: the same at every run of it (yoga reuses parsed documents). */
const literalArguments = new WeakMap<FieldNode, StatArgs>();

function usesVariables(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(usesVariables);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => usesVariables(field.value));
  return false;
}

function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: GraphQLResolveInfo['variableValues']): StatArgs {
  const known = literalArguments.get(node);
  if (known) return known;
  const args = getArgumentValues(field, node, variables) as StatArgs;
  if (!(node.arguments ?? []).some((argument) => usesVariables(argument.value))) literalArguments.set(node, args);
  return args;
}

export function prefetchWebsiteStats(
  info: GraphQLResolveInfo,
  websiteId: string,
  { source, clock, lookahead }: Pick<GatewayContext, 'source' | 'clock' | 'lookahead'>,
): void {
  const websiteType = info.schema.getType('Website');
  const statsField = isObjectType(websiteType) ? websiteType.getFields().stats : undefined;
  if (!statsField) return;

  // Each fragment once: its Website.stats fields are the same nodes wherever it is spread (a chain of
  // fragments that spread the next one twice would otherwise be walked 2^n times).
  const visitedFragments = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined): void => {
    for (const node of selectionSet?.selections ?? []) {
      if (!isIncluded(node, info.variableValues)) continue;
      if (node.kind === Kind.FIELD) {
        if (node.name.value !== 'stats') continue;
        let query: StatsQuery;
        try {
          query = statsQuery(websiteId, argumentsOf(statsField, node, info.variableValues), clock);
        } catch {
          continue; // Invalid arguments: refused before execution (use-argument-checks.ts); nothing to start.
        }
        // Errors surface when Website.stats awaits the same cached promise; here they are only
        // caught so that an unknown website does not also raise an unhandled rejection.
        const page = source.statPage(query);
        page.catch(() => undefined);
        lookahead.set(node, { websiteId, query, page });
      } else if (node.kind === Kind.INLINE_FRAGMENT) {
        visit(node.selectionSet);
      } else if (!visitedFragments.has(node.name.value)) {
        visitedFragments.add(node.name.value);
        visit(info.fragments[node.name.value]?.selectionSet);
      }
    }
  };
  for (const fieldNode of info.fieldNodes) visit(fieldNode.selectionSet);
}

/**
 * What the look-ahead worked out for this Website.stats field, if it did (same field node, same
 * website: a field under a list of websites runs once per website with one node).
 */
export function lookedAhead(
  { lookahead }: Pick<GatewayContext, 'lookahead'>,
  info: GraphQLResolveInfo,
  websiteId: string,
): LookedAhead | undefined {
  const found = info.fieldNodes.length === 1 ? lookahead.get(info.fieldNodes[0]!) : undefined;
  return found?.websiteId === websiteId ? found : undefined;
}
