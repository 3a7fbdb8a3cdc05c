// Look-ahead for `website(id) { stats(...) }`: the stats only need the id, which is already in the
// arguments, so they are started together with the website instead of after it. That turns two
// upstream round trips into one. The request's plan (plan.ts) holds the fields selected under the
// website and their arguments; Website.stats later finds the query and the page's promise here
// (lookedAhead), and other fields asking the same page find it in the loader cache. Only for a key the
// install accepted lately (context.keyKnown): a made-up key costs the one call that refuses it.
import { getNamedType, isCompositeType, type GraphQLResolveInfo } from 'graphql';
import type { StatsQuery } from '../domain.js';
import type { GatewayContext, LookedAhead } from './context.js';
import { planOf } from './plan.js';
import { statsQuery, type StatArgs } from './stat.js';

export function prefetchWebsiteStats(info: GraphQLResolveInfo, websiteId: string, context: GatewayContext): void {
  const type = getNamedType(info.returnType);
  const selection = planOf(context)?.selection;
  // A stranger's key is checked (by the website's call) before anything else is spent on it.
  if (!context.keyKnown || !isCompositeType(type) || !selection) return;
  const { source, clock, lookahead } = context;
  for (const { node, parent, field, args } of selection.fieldsUnder(info.fieldNodes, type)) {
    if (parent.name !== 'Website' || field?.name !== 'stats' || args === undefined) continue;
    let query: StatsQuery;
    try {
      query = statsQuery(websiteId, args as StatArgs, clock);
    } catch {
      continue; // Invalid arguments: refused before execution (use-argument-checks.ts); nothing to start.
    }
    // Errors surface when Website.stats awaits the same cached promise; here they are only
    // caught so that an unknown website does not also raise an unhandled rejection.
    const page = source.statPage(query);
    page.catch(() => undefined);
    lookahead.set(node, { websiteId, query, page });
  }
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
