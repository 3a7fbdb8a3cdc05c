// Statistics: the StatName and StatSortField enums, Stat and StatList, their arguments (also read by
// the look-ahead in prefetch.ts), and Query.stats. Website.stats hangs on Website, in website.ts.
import type { InputShapeFromFields } from '@pothos/core';
import { daysBetween, type Clock } from '../analytics/calendar.js';
import type { DateRange } from '../analytics/periods.js';
import { readValue } from '../analytics/values.js';
import type { Page, Stat, StatName, StatsQuery } from '../domain.js';
import { pagesOf, type PageBound } from '../upstream/source.js';
import { NO_UPSTREAM_CALL, builder } from './builder.js';
import { getNamedType, isCompositeType, type FieldNode, type GraphQLCompositeType, type GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from './context.js';
import { planOf, type Selection } from './plan.js';
import { SortDirectionEnum, listType } from './pagination.js';
import { DateRangeRef, rangeArgs, rangeProblems, resolveRange } from './ranges.js';
import { assertNoProblems, idProblem, listArguments, listArgumentsProblems, problemsOf, type Problem } from './validate.js';

const UNSUPPORTED_ELSEWHERE = 'Only installs that keep it; others answer UNSUPPORTED.';

const statNames: { [N in StatName as Uppercase<N>]: { value: N; description: string } } = {
  BROWSER: { value: 'browser', description: 'Visitors by browser, e.g. "Chrome".' },
  CAMPAIGN: { value: 'campaign', description: 'Visitors by UTM campaign name.' },
  CITY: { value: 'city', description: 'Visitors by city, as "COUNTRY_CODE:City", e.g. "US:New York, NY".' },
  CONTINENT: { value: 'continent', description: 'Visitors by continent, as "CODE:Name", e.g. "EU:Europe".' },
  COUNTRY: { value: 'country', description: 'Visitors by country, as "CODE:Name", e.g. "US:United States".' },
  DEVICE: { value: 'device', description: 'Visitors by device type, e.g. "desktop".' },
  EVENT: { value: 'event', description: 'Custom events, as "name:value:unit" (value and unit may be empty).' },
  LANDING_PAGE: { value: 'landing_page', description: `Visits by entry page (path with query, like PAGE). ${UNSUPPORTED_ELSEWHERE}` },
  LANGUAGE: { value: 'language', description: 'Visitors by two-letter browser language, e.g. "en".' },
  OPERATING_SYSTEM: { value: 'operating_system', description: 'Visitors by operating system, e.g. "Windows".' },
  PAGE: { value: 'page', description: 'Pageviews by page path with query, e.g. "/pricing?plan=pro".' },
  PAGEVIEW: { value: 'pageview', description: "Pageviews per day: each row's value is a date YYYY-MM-DD." },
  PAGEVIEW_HOUR: {
    value: 'pageview_hour',
    description: `Pageviews by hour of day, "00" to "23", summed over the range. ${UNSUPPORTED_ELSEWHERE}`,
  },
  REFERRER: { value: 'referrer', description: 'Visitors by referring host.' },
  SCREEN_RESOLUTION: { value: 'screen_resolution', description: 'Visitors by screen size, e.g. "1920x1080".' },
  VISITOR: { value: 'visitor', description: "Unique visitors per day: each row's value is a date YYYY-MM-DD." },
  VISITOR_HOUR: {
    value: 'visitor_hour',
    description: `Visitors by hour of day, "00" to "23", summed over the range. ${UNSUPPORTED_ELSEWHERE}`,
  },
};

export const StatNameEnum = builder.enumType('StatName', {
  description:
    'A statistic the analytics service keeps for every website. Installs of different versions name some of them differently on the wire; the gateway finds out which (docs/installs-and-versions.md).',
  values: statNames,
});

export const StatSortFieldEnum = builder.enumType('StatSortField', {
  description: 'What a list of statistic rows is sorted by.',
  values: {
    COUNT: { value: 'count', description: 'The summed count of the row.' },
    VALUE: { value: 'value', description: "The row's value (a day, a country, a page...)." },
  } as const,
});

/** With its statistic's name and its list (for `share`). */
export interface StatRow extends Stat {
  name: StatName;
  list: StatListPage;
}

export interface StatListPage extends Page<StatRow> {
  range: DateRange;
  query: StatsQuery;
}

export function toStatList(page: Page<Stat>, query: StatsQuery): StatListPage {
  // Object literals of one shape, not spreads: a dashboard makes about a hundred rows a request.
  const { totalCount, page: number, perPage, lastPage, hasNextPage } = page;
  const list: StatListPage = {
    nodes: [],
    totalCount,
    page: number,
    perPage,
    lastPage,
    hasNextPage,
    range: { from: query.from, to: query.to },
    query,
  };
  const { name } = query;
  list.nodes = page.nodes.map(({ value, count }) => ({ value, count, name, list }));
  return list;
}

/** A row a day for the daily ones, an hour of the day for the hourly ones; null: a row per value seen. */
export function mostRows(name: StatName, range: DateRange): number | null {
  switch (name) {
    case 'visitor':
    case 'pageview':
      return daysBetween(range.from, range.to);
    case 'visitor_hour':
    case 'pageview_hour':
      return 24;
    default:
      return null;
  }
}

const MAX_SUM_PAGES = 20;
const sums = new WeakMap<StatListPage, Promise<number>>();

/** How far `sum` and `share` (and the look-ahead) read a statistic: fewer pages when its range holds fewer rows. */
export function sumBound(query: Pick<StatsQuery, 'name' | 'from' | 'to'>): PageBound {
  const most = mostRows(query.name, query);
  return { rows: most, pages: most === null ? MAX_SUM_PAGES : Math.min(MAX_SUM_PAGES, pagesOf(most)) };
}

/** Over every row of the statistic: as many pages as the list's total says, read in parallel, within sumBound. */
function sumOf(list: StatListPage, ctx: GatewayContext, info: GraphQLResolveInfo): Promise<number> {
  let sum = sums.get(list);
  if (sum === undefined) {
    sum = (async () => {
      if (list.page === 1 && !list.hasNextPage) return list.nodes.reduce((total, row) => total + row.count, 0);
      const rows = await ctx.source.everyStatRow(list.query, sumBound(list.query), pagesOf(list.totalCount), info);
      return rows.reduce((total, row) => total + row.count, 0);
    })();
    sums.set(list, sum);
  }
  return sum;
}

/** Its `sum` or a row's `share`: worked out once per selection (kept across requests without variables). */
export function readsEveryRow(selection: Selection, stats: FieldNode, list: GraphQLCompositeType): boolean {
  let known = everyRow.get(selection);
  if (known === undefined) everyRow.set(selection, (known = new Map()));
  let reads = known.get(stats);
  if (reads === undefined) {
    reads = selection.fieldsUnder([stats], list).some(({ field, node, type }) => {
      if (field?.name === 'sum') return true;
      if (field?.name !== 'nodes' || type === undefined) return false;
      return selection.fieldsUnder([node], type).some((row) => row.field?.name === 'share');
    });
    known.set(stats, reads);
  }
  return reads;
}
const everyRow = new WeakMap<Selection, Map<FieldNode, boolean>>();

/**
 * With `sum` or a row's `share` selected, the first page of 100 rows they read starts with the list's page
 * once `accepted` (null: at once; else the website's call, for a key not accepted lately: a made-up key
 * spends nothing on it). Settles once that read has ended; undefined when nothing was started.
 */
export function rowsAhead(
  query: StatsQuery,
  accepted: Promise<unknown> | null,
  ctx: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<unknown> | undefined {
  const selection = planOf(ctx)?.selection;
  const list = getNamedType(info.returnType);
  if (!selection || !isCompositeType(list) || info.fieldNodes.length !== 1) return undefined;
  if (!readsEveryRow(selection, info.fieldNodes[0]!, list)) return undefined;
  const read = (): Promise<unknown> => ctx.source.everyStatRow(query, sumBound(query));
  return Promise.allSettled([accepted === null ? read() : accepted.then(read)]);
}

const StatEventRef = builder.objectRef<{ name: string; value: string | null; unit: string | null }>('StatEvent').implement({
  description: 'The parts of an EVENT row\'s value, "name:value:unit".',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The event's name." }),
    value: t.exposeString('value', { nullable: true, description: 'Its value, when one was sent.' }),
    unit: t.exposeString('unit', { nullable: true, description: "The value's unit, when one was sent." }),
  }),
});

export const StatRef = builder.objectRef<StatRow>('Stat').implement({
  description: 'One row of a statistic: a value and its count summed over the date range.',
  fields: (t) => ({
    value: t.exposeString('value', {
      description: 'What was counted: a day (YYYY-MM-DD) for VISITOR and PAGEVIEW, else a label such as "US:United States".',
    }),
    count: t.exposeInt('count', { description: 'How many, summed over the date range.' }),
    label: t.string({
      description:
        'The value for people: "United States" for "US:United States", a language\'s name for its code, "Direct" for an empty referrer, an event\'s name; else the value.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (row) => readValue(row.name, row.value).label,
    }),
    code: t.string({
      nullable: true,
      description: "The ISO code in the value: a country's or continent's, a city's country, a language's.",
      complexity: NO_UPSTREAM_CALL,
      resolve: (row) => readValue(row.name, row.value).code,
    }),
    date: t.field({
      type: 'Date',
      nullable: true,
      description: 'The day, for VISITOR and PAGEVIEW rows.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (row) => readValue(row.name, row.value).date,
    }),
    event: t.field({
      type: StatEventRef,
      nullable: true,
      description: 'The parts of an EVENT row; null for other statistics and for values without that shape.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (row) => readValue(row.name, row.value).event,
    }),
    share: t.float({
      nullable: true,
      description: `count / StatList.sum, from 0 to 1; null when the sum is 0. Reads every page of the statistic (up to ${MAX_SUM_PAGES}).`,
      complexity: MAX_SUM_PAGES,
      resolve: async (row, _args, ctx, info) => {
        const sum = await sumOf(row.list, ctx, info);
        return sum === 0 ? null : row.count / sum;
      },
    }),
  }),
});

export const StatListRef = listType<StatRow, StatListPage>('StatList', StatRef, 'statistic rows');

builder.objectFields(StatListRef, (t) => ({
  range: t.expose('range', { type: DateRangeRef, description: 'The days the rows cover.' }),
  sum: t.int({
    description: `The sum of count over every row of the statistic, all pages (up to ${MAX_SUM_PAGES} pages of 100 rows are read).`,
    complexity: MAX_SUM_PAGES,
    resolve: (list, _args, ctx, info) => sumOf(list, ctx, info),
  }),
}));

/** Query.stats's and Website.stats's, apart from the website id. */
export const statArgs = builder.args((t) => ({
  name: t.field({ type: StatNameEnum, required: true, description: 'Which statistic.' }),
  ...rangeArgs,
  search: t.string({ description: 'Only rows whose value contains this text.' }),
  sortBy: t.field({ type: StatSortFieldEnum, defaultValue: 'count', description: 'What to sort rows by.' }),
  sort: t.field({ type: SortDirectionEnum, defaultValue: 'desc', description: 'Sort direction.' }),
  perPage: t.int({ defaultValue: 10, description: 'Rows per page: 10, 25, 50 or 100.' }),
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
}));

export type StatArgs = InputShapeFromFields<typeof statArgs>;

export const statArgsProblems = (args: StatArgs): Problem[] => [...listArgumentsProblems(args), ...rangeProblems(args)];

function statsQueryProblems(websiteId: string, args: StatArgs): Problem[] {
  return [...problemsOf([idProblem(['websiteId'], websiteId)]), ...statArgsProblems(args)];
}

/** Shared by the resolvers and the look-ahead, so both build the same loader key. */
export function statsQuery(websiteId: string, args: StatArgs, clock: Clock): StatsQuery {
  assertNoProblems(statsQueryProblems(websiteId, args));
  const { search, ...rest } = listArguments(args);
  const { from, to } = resolveRange(args, clock);
  return { websiteId, name: args.name, from, to, search, sortBy: args.sortBy ?? 'count', ...rest };
}

builder.queryField('stats', (t) =>
  t.field({
    type: StatListRef,
    description:
      'A statistic of one website over a date range, grouped by value. NOT_FOUND unless the caller owns the website (it is read too).',
    args: { websiteId: t.arg.id({ required: true, description: "The website's id." }), ...statArgs },
    // Some installs serve any website's statistics to any key: answered only once the key has read the
    // website itself (both reads start together: no round trip more).
    complexity: 2,
    extensions: { argumentProblems: ({ websiteId, ...args }) => statsQueryProblems(websiteId, args) },
    resolve: async (_root, { websiteId, ...args }, ctx, info) => {
      const query = statsQuery(websiteId, args, ctx.clock);
      const website = ctx.source.website(websiteId, info);
      const page = ctx.source.statPage(query, info);
      page.catch(() => undefined); // reported through `website` first when that fails
      const rows = rowsAhead(query, ctx.keyKnown ? null : website, ctx, info);
      // Answered (or failed) once the rows started ahead are in: that read does not go on after the answer.
      try {
        await website;
        return toStatList(await page, query);
      } finally {
        await rows;
      }
    },
  }),
);
