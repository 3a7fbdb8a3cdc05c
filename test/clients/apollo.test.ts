// Apollo Client 4 against the gateway, as a frontend uses it: HttpLink with its defaults (POST, or GET
// with useGETForQueries), no special header, InMemoryCache in Apollo's development build (vitest
// resolves packages with the "development" condition, so Apollo's dev-only cache warnings are on).
// Apollo Client over @defer: test/clients/defer.test.ts.
import { format } from 'node:util';
import {
  ApolloClient,
  CombinedGraphQLErrors,
  HttpLink,
  InMemoryCache,
  gql,
  type InMemoryCacheConfig,
  type TypedDocumentNode,
} from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { __DEV__ } from '@apollo/client/utilities/environment';
import { Kind, getOperationAST, parse, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FIXED_DASHBOARD, KEY_1, present, startStack, useStack, type FixedDashboardData, type Stack } from '../fixture.js';
import { apolloCacheConfig } from './cache-config.js';
import { graphqlBlocks } from '../docs.js';

// Apollo's warnings are numbered in its build; these turn the numbers back into their text, as an
// app does in development.
loadDevMessages();
loadErrorMessages();

const stack = useStack();
afterEach(() => vi.restoreAllMocks());

// --- the client --------------------------------------------------------------------------------

interface ClientOptions {
  /** KEY_1 by default; null: no Authorization header. */
  key?: string | null;
  /** HttpLink's useGETForQueries. */
  get?: boolean;
  /** InMemoryCache's options; none: Apollo's defaults. */
  cache?: InMemoryCacheConfig;
  on?: Stack;
}

interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** An Apollo Client as an app makes one, and the HTTP requests it sent (its fetch, observed). */
function apollo({ key = KEY_1, get = false, cache, on = stack }: ClientOptions = {}): {
  client: ApolloClient;
  sent: SentRequest[];
} {
  const sent: SentRequest[] = [];
  const observedFetch: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    sent.push({ method: init?.method ?? 'GET', url, headers: Object.fromEntries(new Headers(init?.headers).entries()) });
    return fetch(input, init);
  };
  const link = new HttpLink({
    uri: on.endpoint,
    fetch: observedFetch,
    useGETForQueries: get,
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
  return {
    client: new ApolloClient({ link, cache: new InMemoryCache(cache), incrementalHandler: new Defer20220824Handler() }),
    sent,
  };
}

/** What Apollo wrote to console.warn and console.error, formatted as the console shows it. */
function consoleMessages(): string[] {
  const messages: string[] = [];
  const record = (...args: unknown[]): void => {
    messages.push(format(...args));
  };
  vi.spyOn(console, 'warn').mockImplementation(record);
  vi.spyOn(console, 'error').mockImplementation(record);
  return messages;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Time for a watched query to react to a cache write (a refetch starts within a few ms). */
const settle = (): Promise<void> => pause(150);

/** Watches `query` and resolves once its first complete result is there. */
async function watch<T>(
  client: ApolloClient,
  query: TypedDocumentNode<T, Record<string, never>>,
): Promise<{ latest: () => T; stop: () => void }> {
  let latest: T | undefined;
  const subscription = client.watchQuery({ query }).subscribe((result) => {
    if (result.dataState === 'complete') latest = result.data;
  });
  for (let waited = 0; latest === undefined; waited += 10) {
    if (waited > 5_000) throw new Error('the watched query never completed');
    await pause(10);
  }
  return {
    latest: () => present(latest, 'the watched result'),
    stop: () => subscription.unsubscribe(),
  };
}

/** The GraphQL error codes of an Apollo error. */
function apolloErrorCodes(error: unknown): unknown[] {
  if (!CombinedGraphQLErrors.is(error)) throw new Error(`expected GraphQL errors, got ${String(error)}`);
  return error.errors.map((e) => e.extensions?.code);
}

// --- documents ---------------------------------------------------------------------------------

interface StatRow {
  value: string;
  count: number;
}

// A dashboard like the docs', over fixed dates (the docs' own examples run in another test of this file).
const DASHBOARD: TypedDocumentNode<FixedDashboardData, Record<string, never>> = gql(FIXED_DASHBOARD);

interface WebsitesTotalData {
  websites: { totalCount: number };
}
const WEBSITES_TOTAL: TypedDocumentNode<WebsitesTotalData, Record<string, never>> = gql`
  query WebsitesTotal { websites { totalCount } }
`;

interface CreateData {
  createWebsite: {
    website: { id: string; domain: string } | null;
    userErrors: { message: string }[];
    query: { websites: { totalCount: number } };
  };
}
const CREATE_AND_COUNT: TypedDocumentNode<CreateData, { domain: string }> = gql`
  mutation CreateAndCount($domain: String!) {
    createWebsite(input: { domain: $domain }) {
      website { id domain }
      userErrors { message }
      query { websites { totalCount } }
    }
  }
`;

// --- HTTP: the clients' defaults ----------------------------------------------------------------

describe('Apollo Client 4 with its defaults', () => {
  it("is Apollo's development build (its cache warnings are on)", () => {
    expect(__DEV__).toBe(true);
  });

  it.each([
    ['POST', false],
    ['GET', true],
  ] as const)('the dashboard over %s: answered, no special header, six upstream calls', async (method, get) => {
    const { client, sent } = apollo({ get });
    const { data } = await client.query({ query: DASHBOARD });
    const website = present(data?.website, 'website');
    expect(website.domain).toBe('acme-analytics.com');
    expect(website.visitors.nodes.length).toBeGreaterThan(0);
    expect(website.pages.totalCount).toBeGreaterThan(0);
    expect(website.referrers.pageInfo.hasNextPage).toEqual(expect.any(Boolean));
    expect(sent.map((request) => request.method)).toEqual([method]);
    // Only what Apollo sends by itself: no CSRF header, no preflight-forcing header.
    expect(Object.keys(present(sent[0], 'the request').headers).sort()).toEqual(['accept', 'authorization', 'content-type'].sort());
    expect(stack.sandbox.log.count).toBe(6); // the website and its five statistics
  });

  it.each([
    ['POST', false],
    ['GET', true],
  ] as const)('without a key, over %s: UNAUTHENTICATED, and nothing reaches the upstream', async (_method, get) => {
    const { client } = apollo({ key: null, get });
    const error: unknown = await client.query({ query: DASHBOARD }).then(
      () => new Error('the query succeeded'),
      (e: unknown) => e,
    );
    expect(apolloErrorCodes(error)).toContain('UNAUTHENTICATED');
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('a mutation goes as POST even with useGETForQueries, and its payload answers the new total in the same round trip', async () => {
    const { client, sent } = apollo({ get: true, cache: apolloCacheConfig });
    const before = present((await client.query({ query: WEBSITES_TOTAL })).data, 'data').websites.totalCount;
    const { data } = await client.mutate({ mutation: CREATE_AND_COUNT, variables: { domain: 'apollo-post.example' } });
    const payload = present(data, 'data').createWebsite;
    expect(payload.userErrors).toEqual([]);
    expect(present(payload.website, 'website').domain).toBe('apollo-post.example');
    expect(payload.query.websites.totalCount).toBe(before + 1);
    expect(sent.map((request) => request.method)).toEqual(['GET', 'POST']);
    // The payload's `query` is the root Query: Apollo writes it to ROOT_QUERY, so the cached count is
    // the new one without another request.
    expect(client.readQuery({ query: WEBSITES_TOTAL })?.websites.totalCount).toBe(before + 1);
    expect(sent).toHaveLength(2);
  });
});

// --- the cache -----------------------------------------------------------------------------------
//
// Apollo warns about a given Type.field once per process (a module-level set), so the tests that
// expect no warning come before the ones that reproduce it.

/** Every query and mutation of the GraphQL examples of docs/queries.md and docs/clients.md, each alone in a document, in order. */
function docsOperations(): { name: string; kind: 'query' | 'mutation'; document: DocumentNode }[] {
  const blocks = graphqlBlocks(['docs/queries.md', 'docs/clients.md']).map((block) => parse(block.text));
  return blocks.flatMap((block) => {
    const fragments = block.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
    return block.definitions
      .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
      .filter((operation) => operation.operation !== 'subscription')
      .map((operation, i) => ({
        name: operation.name?.value ?? `anonymous ${i}`,
        kind: operation.operation === 'mutation' ? ('mutation' as const) : ('query' as const),
        document: { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
      }));
  });
}

interface VisitorsData {
  website: { id: string; visitors: { nodes: StatRow[] } } | null;
}
interface VisitorsTotalData {
  website: { id: string; stats: { totalCount: number } } | null;
}
interface VisitorsValuesData {
  website: { id: string; stats: { nodes: { value: string }[]; pageInfo: { page: number; lastPage: number } } } | null;
}
interface VisitorsNextData {
  website: { id: string; stats: { pageInfo: { hasNextPage: boolean } } } | null;
}

// One statistic with the same arguments, selected four ways, as a dashboard's widgets would.
const STAT_ARGS = 'name: VISITOR, from: "2026-02-14", to: "2026-03-15", sortBy: VALUE, sort: ASC, perPage: 50';
const VISITORS_ROWS: TypedDocumentNode<VisitorsData, Record<string, never>> = gql`
  query VisitorsRows { website(id: "1") { id visitors: stats(${STAT_ARGS}) { nodes { value count } } } }
`;
const VISITORS_TOTAL: TypedDocumentNode<VisitorsTotalData, Record<string, never>> = gql`
  query VisitorsTotal { website(id: "1") { id stats(${STAT_ARGS}) { totalCount } } }
`;
const VISITORS_VALUES: TypedDocumentNode<VisitorsValuesData, Record<string, never>> = gql`
  query VisitorsValues { website(id: "1") { id stats(${STAT_ARGS}) { nodes { value } pageInfo { page lastPage } } } }
`;
const VISITORS_NEXT: TypedDocumentNode<VisitorsNextData, Record<string, never>> = gql`
  query VisitorsNext { website(id: "1") { id stats(${STAT_ARGS}) { pageInfo { hasNextPage } } } }
`;

/**
 * Watches `watched`, then runs `others` one after the other. Answers what Apollo said on the console
 * and the requests it sent; the watched query must have kept its data whatever happened.
 */
async function sameStatisticSelectedDifferently<T>(
  cache: InMemoryCacheConfig | undefined,
  watched: TypedDocumentNode<T, Record<string, never>>,
  others: TypedDocumentNode<unknown, Record<string, never>>[],
): Promise<{ messages: string[]; sent: SentRequest[] }> {
  const messages = consoleMessages();
  const { client, sent } = apollo({ cache });
  const watching = await watch(client, watched);
  const before = watching.latest();
  for (const query of others) {
    await client.query({ query });
    await settle();
  }
  expect(watching.latest()).toEqual(before);
  watching.stop();
  return { messages, sent };
}

interface ListData {
  websites: {
    totalCount: number;
    pageInfo: { page: number; lastPage: number; hasNextPage: boolean };
    nodes: { id: string; domain: string }[];
  };
}
const LIST: TypedDocumentNode<ListData, Record<string, never>> = gql`
  query List {
    websites(perPage: 25, sortBy: DOMAIN, sort: ASC) { totalCount pageInfo { page lastPage hasNextPage } nodes { id domain } }
  }
`;
interface CreateCountingListData {
  createWebsite: { website: { id: string } | null; query: { websites: { totalCount: number } } };
}
const CREATE_COUNTING_LIST: TypedDocumentNode<CreateCountingListData, { domain: string }> = gql`
  mutation CreateCountingList($domain: String!) {
    createWebsite(input: { domain: $domain }) {
      website { id }
      query { websites(perPage: 25, sortBy: DOMAIN, sort: ASC) { totalCount } }
    }
  }
`;

/** A list on screen, then a create whose payload refetches only the list's total. */
async function listThenCreate(
  cache: InMemoryCacheConfig | undefined,
  domain: string,
): Promise<{ messages: string[]; sent: SentRequest[]; before: ListData; after: ListData }> {
  const messages = consoleMessages();
  const { client, sent } = apollo({ cache });
  const list = await watch(client, LIST);
  const before = list.latest();
  await client.mutate({ mutation: CREATE_COUNTING_LIST, variables: { domain } });
  await settle();
  const after = list.latest();
  list.stop();
  return { messages, sent, before, after };
}

/** apolloCacheConfig without one of its type policies, or without StatList's `nodes` merge. */
function configWithout(entry: 'StatList' | 'StatList.nodes' | 'WebsiteList' | 'PageInfo'): InMemoryCacheConfig {
  const typePolicies = { ...apolloCacheConfig.typePolicies };
  if (entry === 'StatList.nodes') typePolicies.StatList = { ...typePolicies.StatList, fields: {} };
  else delete typePolicies[entry];
  return { ...apolloCacheConfig, typePolicies };
}

const getOperationName = (document: DocumentNode): string | undefined => getOperationAST(document)?.name?.value;
const requestCount = (sent: SentRequest[]): number => sent.length;

describe('InMemoryCache with apolloCacheConfig', () => {
  it('the docs examples: their queries twice (from the network, then again over a warm cache), then their mutations: no warning, no error', async () => {
    // Its own stack: the docs' examples create, change and delete websites.
    const own = await startStack();
    try {
      const messages = consoleMessages();
      const { client } = apollo({ cache: apolloCacheConfig, on: own });
      const operations = docsOperations();
      const queries = operations.filter((operation) => operation.kind === 'query');
      const mutations = operations.filter((operation) => operation.kind === 'mutation');
      expect(queries.length).toBeGreaterThanOrEqual(2);
      expect(mutations.length).toBeGreaterThanOrEqual(3);
      for (const fetchPolicy of ['cache-first', 'network-only'] as const) {
        for (const { name, document } of queries) {
          const { data } = await client.query({ query: document, fetchPolicy });
          expect(data, `${name} (${fetchPolicy})`).toBeDefined();
        }
      }
      // Favorite and Delete take the id Create answered, as docs/queries.md tells a user.
      let createdId: string | undefined;
      for (const { name, document } of mutations) {
        const { data } = await client.mutate({ mutation: document, variables: createdId === undefined ? {} : { id: createdId } });
        expect(data, name).toBeDefined();
        createdId ??= (data as { createWebsite?: { website: { id: string } | null } }).createWebsite?.website?.id;
      }
      expect(messages).toEqual([]);
    } finally {
      await own.close();
    }
  });

  const FOUR_WAYS: TypedDocumentNode<unknown, Record<string, never>>[] = [VISITORS_ROWS, VISITORS_TOTAL, VISITORS_VALUES, VISITORS_NEXT];
  it.each(FOUR_WAYS.map((query) => [present(getOperationName(query), 'operation name'), query] as const))(
    'one statistic selected four ways by four queries, %s on screen: merged, no warning, no refetch',
    async (_name, watched) => {
      const others = FOUR_WAYS.filter((query) => query !== watched);
      const { messages, sent } = await sameStatisticSelectedDifferently(apolloCacheConfig, watched, others);
      expect(messages).toEqual([]);
      expect(requestCount(sent)).toBe(4); // each query once, none again
    },
  );

  it("a mutation payload's query refreshing a list on screen: merged into it, no warning, no refetch", async () => {
    const { messages, sent, before, after } = await listThenCreate(apolloCacheConfig, 'merged-list.example');
    expect(messages).toEqual([]);
    expect(requestCount(sent)).toBe(2); // the list, the mutation
    expect(after.websites.totalCount).toBe(before.websites.totalCount + 1);
    expect(after.websites.nodes).toEqual(before.websites.nodes);
    expect(after.websites.pageInfo).toEqual(before.websites.pageInfo);
  });

  it('after deleteWebsite, its update evicts the website: a later cache read no longer has it', async () => {
    const { client, sent } = apollo({ cache: apolloCacheConfig });
    const created = await client.mutate({ mutation: CREATE_COUNTING_LIST, variables: { domain: 'to-evict.example' } });
    const id = present(present(created.data, 'data').createWebsite.website, 'created website').id;
    const list = await watch(client, LIST);
    expect(list.latest().websites.nodes.map((node) => node.id)).toContain(id);
    const { cache } = client;
    const cacheId = cache.identify({ __typename: 'Website', id });
    expect(cacheId).toBe(`Website:${id}`);
    expect(cache.extract()).toHaveProperty(`Website:${id}`);
    const totalBefore = list.latest().websites.totalCount;

    const DELETE: TypedDocumentNode<
      { deleteWebsite: { deletedId: string | null; query: { websites: { totalCount: number } } } },
      { id: string }
    > = gql`
      mutation Delete($id: ID!) {
        deleteWebsite(id: $id) {
          deletedId
          query { websites(perPage: 25, sortBy: DOMAIN, sort: ASC) { totalCount } }
        }
      }
    `;
    const requestsBefore = requestCount(sent);
    await client.mutate({
      mutation: DELETE,
      variables: { id },
      update(store, { data }) {
        const deletedId = data?.deleteWebsite.deletedId;
        if (deletedId === null || deletedId === undefined) return;
        store.evict({ id: store.identify({ __typename: 'Website', id: deletedId }) });
        store.gc();
      },
    });
    await settle();

    expect(cache.extract()).not.toHaveProperty(`Website:${id}`);
    const cached = present(client.readQuery({ query: LIST }), 'the cached list');
    expect(cached.websites.nodes.map((node) => node.id)).not.toContain(id);
    expect(cached.websites.totalCount).toBe(totalBefore - 1);
    expect(list.latest().websites.nodes.map((node) => node.id)).not.toContain(id);
    expect(requestCount(sent)).toBe(requestsBefore + 1); // the mutation only: nothing refetched
    list.stop();
  });
});

describe('what each entry of apolloCacheConfig prevents (Apollo warns once per field and process: after the tests above)', () => {
  it('default InMemoryCache: "Cache data may be lost when replacing the stats field of a Website object", and a refetch', async () => {
    const { messages, sent } = await sameStatisticSelectedDifferently(undefined, VISITORS_ROWS, [VISITORS_TOTAL]);
    expect(messages.join('\n')).toContain('Cache data may be lost when replacing the stats field of a Website object');
    expect(requestCount(sent)).toBe(3); // VisitorsRows, VisitorsTotal, VisitorsRows again: VisitorsTotal replaced its rows
  });

  it('without StatList: the same refetch (the warning above is not repeated: once per process)', async () => {
    const { sent } = await sameStatisticSelectedDifferently(configWithout('StatList'), VISITORS_ROWS, [VISITORS_TOTAL]);
    expect(requestCount(sent)).toBe(3);
  });

  it('without WebsiteList: "... replacing the websites field of a Query object", and the list refetched', async () => {
    const { messages, sent, before, after } = await listThenCreate(configWithout('WebsiteList'), 'unmerged-list.example');
    expect(messages.join('\n')).toContain('Cache data may be lost when replacing the websites field of a Query object');
    expect(requestCount(sent)).toBe(3); // the list, the mutation, the list again
    expect(after.websites.totalCount).toBe(before.websites.totalCount + 1);
  });

  it('without PageInfo: a pageInfo selected as `{ page lastPage }` replaces `{ hasNextPage }`, and the first query is refetched', async () => {
    const { messages, sent } = await sameStatisticSelectedDifferently(configWithout('PageInfo'), VISITORS_NEXT, [VISITORS_VALUES]);
    expect(messages).toEqual([]); // nested in a merged StatList: Apollo says nothing, it refetches
    expect(requestCount(sent)).toBe(3); // VisitorsNext, VisitorsValues, VisitorsNext again
  });

  it("without StatList's nodes merge: rows selected as `{ value }` replace `{ value count }`, and the first query is refetched", async () => {
    const { messages, sent } = await sameStatisticSelectedDifferently(configWithout('StatList.nodes'), VISITORS_ROWS, [VISITORS_VALUES]);
    expect(messages).toEqual([]);
    expect(requestCount(sent)).toBe(3); // VisitorsRows, VisitorsValues, VisitorsRows again
  });
});
