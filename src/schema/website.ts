import type { Website } from '../domain.js';
import { assertWebsiteId, websiteListQuery } from './arguments.js';
import { builder } from './builder.js';
import { PrivacyEnum, SortDirectionEnum, WebsiteSortFieldEnum } from './enums.js';
import { listType } from './lists.js';
import { prefetchWebsiteStats } from './prefetch.js';

export const WebsiteRef = builder.objectRef<Website>('Website').implement({
  description: 'A website tracked by the analytics service, owned by the API key\'s user.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The website\'s id in the analytics service.' }),
    domain: t.exposeString('domain', { description: 'Domain name (or IPv4 address), lower case, without scheme or "www.".' }),
    privacy: t.expose('privacy', { type: PrivacyEnum, description: 'Who may see the statistics page.' }),
    passwordProtected: t.exposeBoolean('passwordProtected', {
      description: 'Whether a password is set (the password itself is never returned).',
    }),
    emailReports: t.exposeBoolean('emailReports', { description: 'Whether periodic e-mail reports are sent.' }),
    excludeBots: t.exposeBoolean('excludeBots', { description: 'Whether visits from known bots are ignored.' }),
    excludeParams: t.exposeStringList('excludeParams', {
      nullable: true,
      description: 'URL query parameter names stripped from tracked pages. null: this install does not report it.',
    }),
    excludeIps: t.exposeStringList('excludeIps', {
      nullable: true,
      description: 'IP addresses whose visits are not tracked. null: this install does not report it.',
    }),
    favorite: t.exposeBoolean('favorite', {
      nullable: true,
      description: 'Whether the owner marked the website as a favorite. null: this install does not report it (it has no favorites).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', nullable: true, description: 'When the website was added.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true, description: 'When its settings last changed.' }),
  }),
});

export const WebsiteListRef = listType('WebsiteList', WebsiteRef, 'websites');

builder.queryField('websites', (t) =>
  t.field({
    type: WebsiteListRef,
    description: 'The caller\'s websites, one page at a time.',
    args: {
      search: t.arg.string({ description: 'Only websites whose domain contains this text.' }),
      favorite: t.arg.boolean({
        description: 'Only favorites (true) or only non-favorites (false). UNSUPPORTED on an install without favorites.',
      }),
      sortBy: t.arg({ type: WebsiteSortFieldEnum, defaultValue: 'id', description: 'What to sort by.' }),
      sort: t.arg({ type: SortDirectionEnum, defaultValue: 'desc', description: 'Sort direction.' }),
      perPage: t.arg.int({ defaultValue: 10, description: 'Websites per page: 10, 25, 50 or 100.' }),
      page: t.arg.int({ defaultValue: 1, description: 'Page number, from 1.' }),
    },
    resolve: (_root, args, ctx) => ctx.loaders.websitePage.load(websiteListQuery(args)),
  }),
);

builder.queryField('website', (t) =>
  t.field({
    type: WebsiteRef,
    nullable: true,
    description: 'One website by id; null with a NOT_FOUND error when the caller has no such website.',
    args: { id: t.arg.id({ required: true, description: 'The website\'s id.' }) },
    resolve: (_root, { id }, ctx, info) => {
      assertWebsiteId('id', id);
      const website = ctx.loaders.website.load(id);
      prefetchWebsiteStats(info, id, ctx.loaders);
      return website;
    },
  }),
);
