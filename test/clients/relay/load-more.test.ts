// "Load more" with the cursor pagination helpers of Apollo Client (relayStylePagination) and urql's
// graphcache (relayPagination) over websitesConnection, over real HTTP against the gateway and the
// sandbox: each next page is merged into one list in the cache, every website once and in order, with
// no warning. The two configurations below are those of docs/clients.md.
import { format } from 'node:util';
import { ApolloClient, HttpLink, InMemoryCache, gql, type InMemoryCacheConfig, type TypedDocumentNode } from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { relayStylePagination } from '@apollo/client/utilities';
import { Client, fetchExchange } from '@urql/core';
import { cacheExchange, type CacheExchangeOpts } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_1, present, useStack } from '../../fixture.js';

loadDevMessages();
loadErrorMessages();

const stack = useStack();
afterEach(() => vi.restoreAllMocks());

/** Apollo Client 4: `new InMemoryCache(apolloLoadMore)`. A list per search, favorite, sortBy and sort. */
const apolloLoadMore: InMemoryCacheConfig = {
  typePolicies: { Query: { fields: { websitesConnection: relayStylePagination(['search', 'favorite', 'sortBy', 'sort']) } } },
};

/** urql's graphcache: `cacheExchange(urqlLoadMore)`. A list per value of the other arguments, by itself. */
const urqlLoadMore = { resolvers: { Query: { websitesConnection: relayPagination() } } } satisfies Partial<CacheExchangeOpts>;

interface LoadMoreData {
  websitesConnection: {
    totalCount: number;
    edges: { cursor: string; node: { id: string; domain: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}
interface LoadMoreVariables {
  first: number;
  after?: string | null;
  sort?: 'ASC' | 'DESC';
}
const LOAD_MORE: TypedDocumentNode<LoadMoreData, LoadMoreVariables> = gql`
  query LoadMore($first: Int!, $after: String, $sort: SortDirection) {
    websitesConnection(first: $first, after: $after, sort: $sort) {
      totalCount
      edges { cursor node { id domain } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** KEY_1's demo websites, newest first. */
const NEWEST_FIRST = ['10', '8', '7', '5', '4', '2', '1'];

/** What the clients wrote to console.warn and console.error. */
function consoleMessages(): string[] {
  const messages: string[] = [];
  const record = (...args: unknown[]): void => void messages.push(format(...args));
  vi.spyOn(console, 'warn').mockImplementation(record);
  vi.spyOn(console, 'error').mockImplementation(record);
  return messages;
}

const idsOf = (data: LoadMoreData | undefined): string[] => present(data, 'data').websitesConnection.edges.map((edge) => edge.node.id);

describe("Apollo Client 4's relayStylePagination", () => {
  it('fetchMore appends each page to the one list a watched query shows: every website once, in order, no warning', async () => {
    const messages = consoleMessages();
    const link = new HttpLink({ uri: stack.endpoint, headers: { authorization: `Bearer ${KEY_1}` } });
    const client = new ApolloClient({ link, cache: new InMemoryCache(apolloLoadMore) });
    const watched = client.watchQuery({ query: LOAD_MORE, variables: { first: 3 } });
    const shown: LoadMoreData[] = [];
    const subscription = watched.subscribe((result) => {
      if (result.dataState === 'complete') shown.push(result.data);
    });
    try {
      let latest = present((await client.query({ query: LOAD_MORE, variables: { first: 3 } })).data, 'first page');
      for (let loads = 0; latest.websitesConnection.pageInfo.hasNextPage; loads++) {
        expect(loads).toBeLessThan(3);
        await watched.fetchMore({ variables: { after: latest.websitesConnection.pageInfo.endCursor } });
        latest = present(client.readQuery({ query: LOAD_MORE, variables: { first: 3 } }), 'the cached list');
      }
      expect(idsOf(latest)).toEqual(NEWEST_FIRST);
      // The watched query shows the merged list once the cache has broadcast it.
      await vi.waitFor(() => expect(idsOf(shown.at(-1))).toEqual(NEWEST_FIRST));
      expect(latest.websitesConnection.totalCount).toBe(7);

      // Another order is another list: it starts from its own first page.
      const ascending = await client.query({ query: LOAD_MORE, variables: { first: 3, sort: 'ASC' } });
      expect(idsOf(ascending.data)).toEqual(['1', '2', '4']);
      expect(messages).toEqual([]);
    } finally {
      subscription.unsubscribe();
    }
  });
});

describe("urql graphcache's relayPagination", () => {
  it('each next page merges into the list the query answers: every website once, in order, no warning', async () => {
    const messages = consoleMessages();
    const client = new Client({
      url: stack.endpoint,
      exchanges: [cacheExchange(urqlLoadMore), fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${KEY_1}` } },
    });
    let result = await client.query(LOAD_MORE, { first: 3 }).toPromise();
    expect(idsOf(result.data)).toEqual(NEWEST_FIRST.slice(0, 3));
    for (let loads = 0; present(result.data, 'data').websitesConnection.pageInfo.hasNextPage; loads++) {
      expect(loads).toBeLessThan(3);
      const after = present(result.data, 'data').websitesConnection.pageInfo.endCursor;
      result = await client.query(LOAD_MORE, { first: 3, after }).toPromise();
      expect(result.error).toBeUndefined();
    }
    expect(idsOf(result.data)).toEqual(NEWEST_FIRST);

    const ascending = await client.query(LOAD_MORE, { first: 3, sort: 'ASC' }).toPromise();
    expect(idsOf(ascending.data)).toEqual(['1', '2', '4']);
    expect(messages).toEqual([]);
  });
});
