// Look-ahead for `website(id) { stats(...) }`: the stats only need the id, which is already in the
// arguments, so they are started together with the website instead of after it. That turns two
// upstream round trips into one. Website.stats later finds the query worked out here (lookedAhead)
// and the same promises in the loader cache.
import { Kind, getArgumentValues, isObjectType, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { isIncluded } from '../graphql/directives.js';
import type { GatewayContext } from '../graphql/context.js';
import type { StatsQuery } from '../domain.js';
import { statsQuery, type StatArgs } from './stats.js';

export function prefetchWebsiteStats(
  info: GraphQLResolveInfo,
  websiteId: string,
  { loaders, clock, lookahead }: Pick<GatewayContext, 'loaders' | 'clock' | 'lookahead'>,
): void {
  const websiteType = info.schema.getType('Website');
  const statsField = isObjectType(websiteType) ? websiteType.getFields().stats : undefined;
  if (!statsField) return;

  const visit = (selectionSet: SelectionSetNode | undefined): void => {
    for (const node of selectionSet?.selections ?? []) {
      if (!isIncluded(node, info.variableValues)) continue;
      if (node.kind === Kind.FIELD) {
        if (node.name.value !== 'stats') continue;
        let query;
        try {
          query = statsQuery(websiteId, getArgumentValues(statsField, node, info.variableValues) as StatArgs, clock);
        } catch {
          continue; // Invalid arguments: Website.stats will report them when it runs.
        }
        // Errors surface when Website.stats awaits the same cached promise; here they are only
        // caught so that an unknown website does not also raise an unhandled rejection.
        loaders.statPage.load(query).catch(() => undefined);
        lookahead.set(node, { websiteId, query });
      } else if (node.kind === Kind.INLINE_FRAGMENT) {
        visit(node.selectionSet);
      } else {
        visit(info.fragments[node.name.value]?.selectionSet);
      }
    }
  };
  for (const fieldNode of info.fieldNodes) visit(fieldNode.selectionSet);
}

/**
 * The query the look-ahead worked out for this Website.stats field, if it did (same field node, same
 * website: a field under a list of websites runs once per website with one node).
 */
export function lookedAhead({ lookahead }: Pick<GatewayContext, 'lookahead'>, info: GraphQLResolveInfo, websiteId: string): StatsQuery | undefined {
  const found = info.fieldNodes.length === 1 ? lookahead.get(info.fieldNodes[0]!) : undefined;
  return found?.websiteId === websiteId ? found.query : undefined;
}
