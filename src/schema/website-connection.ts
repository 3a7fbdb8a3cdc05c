// Query.websitesConnection: the caller's websites as a cursor connection, for lists that load more as
// they go (Relay's @connection, Apollo's relayStylePagination, urql's relayPagination). Query.websites
// stays for tables with page numbers; both read the same upstream pages (offset-connection.ts).
import type { InputShapeFromFields } from '@pothos/core';
import type { WebsiteListQuery } from '../domain.js';
import { builder } from './builder.js';
import { connectionArgsProblems, connectionCost, listFingerprint, offsetConnection, type ConnectionArgs } from './offset-connection.js';
import { assertNoProblems, listArguments, listArgumentsProblems, type Problem } from './validate.js';
import { WebsiteRef, websiteListArgs, websiteListQuery } from './website.js';

type ListArgs = InputShapeFromFields<typeof websiteListArgs>;

const LIST_ARGUMENTS = 'search, favorite, sortBy or sort arguments';

/** websiteListQuery's, paging aside. */
function filterOf(args: ListArgs): Omit<WebsiteListQuery, 'perPage' | 'page'> {
  const { perPage: _perPage, page: _page, ...filter } = websiteListQuery({ ...args, perPage: null, page: null });
  return filter;
}

/** Normalized, unchecked: an over-long search is refused beside a cursor's problems, not instead of them. */
function fingerprintOf(args: ListArgs): string {
  const { search, sort } = listArguments(args);
  return listFingerprint(['websitesConnection', search ?? null, args.favorite ?? null, args.sortBy ?? 'id', sort]);
}

/** The list's (`search` is the one with a rule) and the connection's. */
function connectionProblems(args: ListArgs & ConnectionArgs): Problem[] {
  return [...listArgumentsProblems({ search: args.search }), ...connectionArgsProblems(args, fingerprintOf(args), LIST_ARGUMENTS)];
}

builder.queryField('websitesConnection', (t) =>
  t.connection(
    {
      type: WebsiteRef,
      description:
        "The caller's websites as a cursor connection, for lists that load more (Relay's @connection, Apollo's relayStylePagination, urql's relayPagination). At most 2 upstream calls a page; `last` without `before` reads the list's length first (one more).",
      args: websiteListArgs,
      complexity: connectionCost,
      extensions: { argumentProblems: connectionProblems },
      resolve: (_root, args, ctx, info) => {
        assertNoProblems(connectionProblems(args));
        const filter = filterOf(args);
        return offsetConnection(args, fingerprintOf(args), ({ perPage, page }) =>
          ctx.source.websitePage({ ...filter, perPage, page }, info),
        );
      },
    },
    {
      name: 'WebsiteConnection',
      description: "A page of the caller's websites, each with its cursor.",
      fields: (c) => ({
        totalCount: c.exposeInt('totalCount', { description: 'Number of websites in the list, over all pages.' }),
      }),
    },
    { name: 'WebsiteEdge', description: 'A website of the list and its cursor.' },
  ),
);
