// Look-ahead for `website(id) { … }`: the reads its fields need follow from the id and the arguments,
// which the request's plan holds before any resolver runs, so they start together with the website: one
// wave of upstream calls instead of two or three (stats' page, with `sum` or `share` the first page of
// 100 rows; a series' or summary's days). Website.stats finds its page here (lookedAhead); other
// resolvers find their reads in the loaders. For a key not accepted lately (context.keyKnown) they start
// once the website's call has accepted it: a made-up key costs the one call that refuses it.
import { getNamedType, isCompositeType, type GraphQLResolveInfo } from 'graphql';
import { comparedRange, type Comparison } from '../analytics/series.js';
import type { StatsQuery, Website } from '../domain.js';
import type { GatewayContext, LookedAhead } from './context.js';
import { planOf, type SelectedField, type Selection } from './plan.js';
import { resolveRange, type RangeInput } from './ranges.js';
import { dailyRead, type Metric } from './daily.js';
import { readsEveryRow, statsQuery, sumBound, type StatArgs } from './stat.js';

/** Failing, it fails once the reads started have ended: none goes on after the answer, uncounted. */
export function websiteLookingAhead(id: string, context: GatewayContext, info: GraphQLResolveInfo): Promise<Website> {
  const website = context.source.website(id, info);
  const started = lookAhead(info, id, website, context);
  return website.catch(async (error: unknown) => {
    await started;
    throw error;
  });
}

/** Resolves once every read it started has ended. */
function lookAhead(info: GraphQLResolveInfo, websiteId: string, website: Promise<Website>, context: GatewayContext): Promise<unknown> {
  const type = getNamedType(info.returnType);
  const selection = planOf(context)?.selection;
  if (!isCompositeType(type) || !selection) return Promise.resolve();
  const start = (): Promise<unknown> =>
    Promise.allSettled(selection.fieldsUnder(info.fieldNodes, type).flatMap((field) => startReads(field, websiteId, selection, context)));
  return context.keyKnown ? start() : website.then(start, () => undefined);
}

/** Starts what one field under a website reads; its reads. */
function startReads(selected: SelectedField, websiteId: string, selection: Selection, context: GatewayContext): Promise<unknown>[] {
  const { node, parent, field, args, type } = selected;
  if (parent.name !== 'Website' || field === undefined || args === undefined) return [];
  const { source, clock, lookahead } = context;
  // Errors surface when the resolvers await the same loads; the reads returned are only settled.
  const everyDay = (metric: Metric, range: { from: string; to: string }): Promise<unknown> => {
    const { query, bound } = dailyRead(websiteId, metric, range);
    return source.everyStatRow(query, bound);
  };
  try {
    switch (field.name) {
      case 'stats': {
        const query: StatsQuery = statsQuery(websiteId, args as StatArgs, clock);
        const page = source.statPage(query);
        if (type === undefined || !readsEveryRow(selection, node, type)) {
          lookahead.set(node, { websiteId, query, page });
          return [page];
        }
        // Answered once the first page its sum reads is in too: that read does not go on after the answer.
        const rows = source.everyStatRow(query, sumBound(query));
        const listed = Promise.allSettled([page, rows]).then(() => page);
        lookahead.set(node, { websiteId, query, page: listed });
        return [listed, rows];
      }
      case 'series':
        return [everyDay(args.metric as Metric, resolveRange(args as RangeInput, clock))];
      case 'summary': {
        const range = resolveRange(args as RangeInput, clock);
        const compare = (args.compare ?? null) as Comparison | null;
        return (compare === null ? [range] : [range, comparedRange(range, compare)]).flatMap((asked) => [
          everyDay('VISITORS', asked),
          everyDay('PAGEVIEWS', asked),
        ]);
      }
      default:
        return [];
    }
  } catch {
    return []; // Invalid arguments: refused before execution (use-argument-checks.ts); nothing to start.
  }
}

/** Same field node and website: a field under a list of websites runs once per website with one node. */
export function lookedAhead(
  { lookahead }: Pick<GatewayContext, 'lookahead'>,
  info: GraphQLResolveInfo,
  websiteId: string,
): LookedAhead | undefined {
  const found = info.fieldNodes.length === 1 ? lookahead.get(info.fieldNodes[0]!) : undefined;
  return found?.websiteId === websiteId ? found : undefined;
}
