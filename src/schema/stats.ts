// Statistics: the StatName and StatSortField enums, Stat and StatList, their arguments (also read by
// the look-ahead in prefetch.ts), and Query.stats. Website.stats hangs on Website, in website.ts.
import type { InputShapeFromFields } from '@pothos/core';
import type { Stat, StatName, StatsQuery } from '../domain.js';
import { builder } from './builder.js';
import { SortDirectionEnum, listType } from './pagination.js';
import { assertNoProblems, dateProblem, dateRangeProblem, idProblem, pagingProblems, searchProblem } from './validate.js';

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
  PAGEVIEW: { value: 'pageview', description: 'Pageviews per day: each row\'s value is a date YYYY-MM-DD.' },
  PAGEVIEW_HOUR: {
    value: 'pageview_hour',
    description: `Pageviews by hour of day, "00" to "23", summed over the range. ${UNSUPPORTED_ELSEWHERE}`,
  },
  REFERRER: { value: 'referrer', description: 'Visitors by referring host.' },
  SCREEN_RESOLUTION: { value: 'screen_resolution', description: 'Visitors by screen size, e.g. "1920x1080".' },
  VISITOR: { value: 'visitor', description: 'Unique visitors per day: each row\'s value is a date YYYY-MM-DD.' },
  VISITOR_HOUR: {
    value: 'visitor_hour',
    description: `Visitors by hour of day, "00" to "23", summed over the range. ${UNSUPPORTED_ELSEWHERE}`,
  },
};

export const StatNameEnum = builder.enumType('StatName', {
  description:
    'A statistic the analytics service keeps for every website. Installs of different versions name some of them differently on the wire; the gateway finds out which (README: "Installs and versions").',
  values: statNames,
});

export const StatSortFieldEnum = builder.enumType('StatSortField', {
  description: 'What a list of statistic rows is sorted by.',
  values: {
    COUNT: { value: 'count', description: 'The summed count of the row.' },
    VALUE: { value: 'value', description: 'The row\'s value (a day, a country, a page...).' },
  } as const,
});

export const StatRef = builder.objectRef<Stat>('Stat').implement({
  description: 'One row of a statistic: a value and its count summed over the date range.',
  fields: (t) => ({
    value: t.exposeString('value', {
      description: 'What was counted: a day (YYYY-MM-DD) for VISITOR and PAGEVIEW, else a label such as "US:United States".',
    }),
    count: t.exposeInt('count', { description: 'How many, summed over the date range.' }),
  }),
});

export const StatListRef = listType('StatList', StatRef, 'statistic rows');

/** The arguments of Query.stats and Website.stats, apart from the website id. */
export const statArgs = builder.args((t) => ({
  name: t.field({ type: StatNameEnum, required: true, description: 'Which statistic.' }),
  from: t.field({ type: 'Date', required: true, description: 'First day of the range, inclusive.' }),
  to: t.field({ type: 'Date', required: true, description: 'Last day of the range, inclusive; not before `from`.' }),
  search: t.string({ description: 'Only rows whose value contains this text.' }),
  sortBy: t.field({ type: StatSortFieldEnum, defaultValue: 'count', description: 'What to sort rows by.' }),
  sort: t.field({ type: SortDirectionEnum, defaultValue: 'desc', description: 'Sort direction.' }),
  perPage: t.int({ defaultValue: 10, description: 'Rows per page: 10, 25, 50 or 100.' }),
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
}));

export type StatArgs = InputShapeFromFields<typeof statArgs>;

/**
 * The validated upstream query for a statistic. Shared by the resolvers and the look-ahead, so both
 * build the same loader key for the same arguments. An explicit null means "the default"; an empty
 * search filters nothing, so it is not sent and shares its cache entry with no search.
 */
export function statsQuery(websiteId: string, args: StatArgs): StatsQuery {
  const perPage = args.perPage ?? 10;
  const page = args.page ?? 1;
  const search = args.search === '' || args.search === null ? undefined : args.search;
  assertNoProblems([
    idProblem(['websiteId'], websiteId),
    dateProblem('from', args.from),
    dateProblem('to', args.to),
    ...pagingProblems({ perPage, page }),
    searchProblem(search),
    dateRangeProblem(args.from, args.to),
  ]);
  return {
    websiteId,
    name: args.name,
    from: args.from,
    to: args.to,
    ...(search === undefined ? {} : { search }),
    sortBy: args.sortBy ?? 'count',
    sort: args.sort ?? 'desc',
    perPage,
    page,
  };
}

builder.queryField('stats', (t) =>
  t.field({
    type: StatListRef,
    description:
      'A statistic of one website over a date range, grouped by value. NOT_FOUND unless the caller owns the website (it is read too).',
    args: { websiteId: t.arg.id({ required: true, description: 'The website\'s id.' }), ...statArgs },
    // Some installs serve any website's statistics to any key: they are answered only once the
    // same key has read the website itself (both reads start together, so it costs no round trip).
    complexity: 2,
    resolve: async (_root, { websiteId, ...args }, ctx) => {
      const query = statsQuery(websiteId, args);
      const website = ctx.loaders.website.load(websiteId);
      const page = ctx.loaders.statPage.load(query);
      page.catch(() => undefined); // reported through `website` first when that fails
      await website;
      return page;
    },
  }),
);
