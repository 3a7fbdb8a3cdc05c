import type { Stat } from '../domain.js';
import { statsQuery } from './arguments.js';
import { builder } from './builder.js';
import { SortDirectionEnum, StatNameEnum, StatSortFieldEnum } from './enums.js';
import { listType } from './lists.js';
import { WebsiteRef } from './website.js';

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
const statArgs = builder.args((t) => ({
  name: t.field({ type: StatNameEnum, required: true, description: 'Which statistic.' }),
  from: t.field({ type: 'Date', required: true, description: 'First day of the range, inclusive.' }),
  to: t.field({ type: 'Date', required: true, description: 'Last day of the range, inclusive; not before `from`.' }),
  search: t.string({ description: 'Only rows whose value contains this text.' }),
  sortBy: t.field({ type: StatSortFieldEnum, defaultValue: 'count', description: 'What to sort rows by.' }),
  sort: t.field({ type: SortDirectionEnum, defaultValue: 'desc', description: 'Sort direction.' }),
  perPage: t.int({ defaultValue: 10, description: 'Rows per page: 10, 25, 50 or 100.' }),
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
}));

builder.queryField('stats', (t) =>
  t.field({
    type: StatListRef,
    description:
      'A statistic of one website over a date range, grouped by value. NOT_FOUND unless the caller owns the website (it is read too).',
    args: { websiteId: t.arg.id({ required: true, description: 'The website\'s id.' }), ...statArgs },
    // Some installs serve any website's statistics to any key: they are answered only once the
    // same key has read the website itself (both reads start together, so it costs no round trip).
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

builder.objectField(WebsiteRef, 'stats', (t) =>
  t.field({
    type: StatListRef,
    description: 'A statistic of this website over a date range, grouped by value.',
    args: statArgs,
    resolve: (website, args, ctx) => ctx.loaders.statPage.load(statsQuery(website.id, args)),
  }),
);
