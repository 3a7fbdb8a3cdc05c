// GraphQL arguments -> validated domain queries. Shared by the resolvers and by the look-ahead in
// prefetch.ts, so both build the same cache key for the same arguments.
import type { SortDirection, StatName, StatsQuery, WebsiteListQuery } from '../domain.js';
import { assertNoProblems, dateRangeProblem, idProblem, pagingProblems, searchProblem } from './validate.js';

/** Nullable arguments with defaults: an explicit null means "the default". */
interface PagingInput {
  search?: string | null;
  sort?: SortDirection | null;
  perPage?: number | null;
  page?: number | null;
}

export interface StatsArgs extends PagingInput {
  name: StatName;
  from: string;
  to: string;
  sortBy?: 'count' | 'value' | null;
}

export interface WebsitesArgs extends PagingInput {
  favorite?: boolean | null;
  sortBy?: 'id' | 'domain' | null;
}

export function assertWebsiteId(argument: string, id: string): void {
  assertNoProblems([idProblem([argument], id)]);
}

function paging(args: PagingInput) {
  const perPage = args.perPage ?? 10;
  const page = args.page ?? 1;
  // An empty search filters nothing; it is not sent, so it shares a cache entry with no search.
  const search = args.search === '' || args.search === null ? undefined : args.search;
  assertNoProblems([...pagingProblems({ perPage, page }), searchProblem(search)]);
  return { perPage, page, search, sort: args.sort ?? 'desc' };
}

export function statsQuery(websiteId: string, args: StatsArgs): StatsQuery {
  assertWebsiteId('websiteId', websiteId);
  const { search, ...rest } = paging(args);
  assertNoProblems([dateRangeProblem(args.from, args.to)]);
  return {
    websiteId,
    name: args.name,
    from: args.from,
    to: args.to,
    ...(search === undefined ? {} : { search }),
    sortBy: args.sortBy ?? 'count',
    ...rest,
  };
}

export function websiteListQuery(args: WebsitesArgs): WebsiteListQuery {
  const { search, ...rest } = paging(args);
  return {
    ...(search === undefined ? {} : { search }),
    ...(args.favorite === null || args.favorite === undefined ? {} : { favorite: args.favorite }),
    sortBy: args.sortBy ?? 'id',
    ...rest,
  };
}
