// What every paginated list shares: its sort direction, PageInfo, and the list type itself.
import type { ObjectRef } from '@pothos/core';
import type { Page } from '../domain.js';
import { NO_UPSTREAM_CALL, builder } from './builder.js';

type Types = typeof builder.$inferSchemaTypes;

export const SortDirectionEnum = builder.enumType('SortDirection', {
  description: 'Order of a sorted list.',
  values: {
    ASC: { value: 'asc', description: 'Smallest (or oldest, or A) first.' },
    DESC: { value: 'desc', description: 'Largest (or newest, or Z) first.' },
  } as const,
});

export const PageInfoRef = builder.objectRef<Page<unknown>>('PageInfo').implement({
  description: 'Where a page sits in a paginated list.',
  fields: (t) => ({
    page: t.exposeInt('page', { description: "This page's number, from 1." }),
    perPage: t.exposeInt('perPage', { description: 'Items per page.' }),
    lastPage: t.exposeInt('lastPage', { description: 'Number of the last page (1 for an empty list).' }),
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether a later page has items.' }),
    hasPreviousPage: t.boolean({
      description: 'Whether this is not the first page.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (page) => page.page > 1,
    }),
  }),
});

/** WebsiteList, StatList. */
export function listType<T, P extends Page<T> = Page<T>>(name: string, nodeRef: ObjectRef<Types, T>, noun: string) {
  return builder.objectRef<P>(name).implement({
    description: `One page of ${noun}.`,
    fields: (t) => ({
      nodes: t.field({
        type: [nodeRef],
        description: `The ${noun} on this page.`,
        complexity: NO_UPSTREAM_CALL,
        resolve: (page) => page.nodes,
      }),
      totalCount: t.int({
        description: `Number of ${noun} over all pages.`,
        complexity: NO_UPSTREAM_CALL,
        resolve: (page) => page.totalCount,
      }),
      pageInfo: t.field({
        type: PageInfoRef,
        description: 'Pagination of this list.',
        complexity: NO_UPSTREAM_CALL,
        resolve: (page) => page,
      }),
    }),
  });
}
