// urql 6 against the gateway as a frontend uses it, over real HTTP: the queries of docs/queries.md with urql's
// defaults (queries as GET within the URL limit, no Content-Type, no CSRF header), graphcache with
// the configuration of cache-config.ts, and the mutation payloads' `query` (a refetch in the same
// round trip).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Client, cacheExchange, fetchExchange, type Exchange } from '@urql/core';
import type { CacheExchangeOpts } from '@urql/exchange-graphcache';
import { Kind, OperationTypeNode, parse, type OperationDefinitionNode } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_1, present, restCalls, useStack, type FixedDashboardData, type StatListData } from '../fixture.js';
import { graphqlBlocks } from '../docs.js';
import { urqlGraphcacheConfig } from './cache-config.js';

const stack = useStack();
const authorization = `Bearer ${KEY_1}`;

afterEach(() => {
  vi.restoreAllMocks();
});

/** urql's Client as its documentation shows it, plus the caller's key. */
function urqlClient(exchanges: Exchange[]): Client {
  return new Client({ url: stack.endpoint, exchanges, fetchOptions: { headers: { authorization } } });
}

// --- The queries of docs/queries.md, taken from the page itself --------------------------------

const docsQueries = graphqlBlocks(['docs/queries.md'])
  .map((block) => block.text)
  .filter((block) =>
    parse(block).definitions.every(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.QUERY,
    ),
  );
const rootFieldOf = (block: string): string => {
  const [operation] = parse(block).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const [field] = operation?.selectionSet.selections ?? [];
  return field?.kind === Kind.FIELD ? field.name.value : '';
};
const DASHBOARD = present(
  docsQueries.find((block) => rootFieldOf(block) === 'website' && block.includes('query Dashboard')),
  'the dashboard of docs/queries.md',
);
const WEBSITE_LIST = present(
  docsQueries.find((block) => rootFieldOf(block) === 'websites'),
  'the list of websites of docs/queries.md',
);

interface WebsiteListData {
  websites: {
    totalCount: number;
    pageInfo: { page: number; lastPage: number; hasNextPage: boolean };
    nodes: { id: string; domain: string; favorite: boolean | null; visitors: StatListData }[];
  };
}

// --- What the client sent ---------------------------------------------------------------------

interface SentRequest {
  method: string;
  url: string;
  contentType: string | null;
  body: string | null;
}

/** Records the requests made to the gateway through the global fetch (urql's default), passing them on. */
function recordRequests(): SentRequest[] {
  const sent: SentRequest[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const request = new Request(input, init);
    if (request.url.startsWith(stack.endpoint)) {
      sent.push({
        method: request.method,
        url: request.url,
        contentType: request.headers.get('content-type'),
        body: typeof init?.body === 'string' ? init.body : null,
      });
    }
    return realFetch(input, init);
  });
  return sent;
}

describe('urql 6 with its defaults', () => {
  it('finds both docs queries (the dashboard and the list of websites)', () => {
    expect(DASHBOARD).toContain('query Dashboard');
    expect(WEBSITE_LIST).toContain('websites(');
  });

  it('answers the docs dashboard and list: GET within the URL limit, no Content-Type, no CSRF header', async () => {
    const sent = recordRequests();
    const client = urqlClient([cacheExchange, fetchExchange]);

    const dashboard = await client.query<FixedDashboardData>(DASHBOARD, {}).toPromise();
    expect(dashboard.error).toBeUndefined();
    const website = present(dashboard.data?.website, 'website');
    expect(website.domain).toBe('acme-analytics.com');
    for (const stat of [website.visitors, website.pages, website.countries, website.browsers, website.referrers]) {
      expect(stat.nodes.length).toBeGreaterThan(0);
    }
    expect(website.visitors.nodes).toHaveLength(30); // 2026-02-14 to 2026-03-15, a row a day

    const list = await client.query<WebsiteListData>(WEBSITE_LIST, {}).toPromise();
    expect(list.error).toBeUndefined();
    const websites = present(list.data, 'data').websites;
    expect(websites.totalCount).toBe(7);
    expect(websites.nodes.map((node) => node.domain)).toEqual([...websites.nodes.map((node) => node.domain)].sort());
    for (const node of websites.nodes) expect(node.visitors.nodes).toHaveLength(30);

    // urql sends a query as GET while its URL stays under 2048 characters (both do): no body, no
    // Content-Type, no CSRF header, the query in the URL.
    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET']);
    for (const request of sent) {
      expect(request.url.length).toBeLessThan(2048);
      expect(new URL(request.url).searchParams.get('query')).toContain('name: VISITOR');
      expect(request.contentType).toBeNull();
      expect(request.body).toBeNull();
    }
  });

  it('a mutation payload answers `query` after the write: the refetch comes in the same round trip', async () => {
    const sent = recordRequests();
    const client = urqlClient([cacheExchange, fetchExchange]);
    interface CreateData {
      createWebsite: {
        website: { id: string; domain: string } | null;
        userErrors: { message: string }[];
        query: { websites: { totalCount: number; nodes: { id: string; domain: string }[] } };
      };
    }
    const created = await client
      .mutation<CreateData>(
        `mutation Create($input: CreateWebsiteInput!) {
          createWebsite(input: $input) {
            website { id domain }
            userErrors { message }
            query { websites(perPage: 100, sortBy: DOMAIN, sort: ASC) { totalCount nodes { id domain } } }
          }
        }`,
        { input: { domain: 'refetch.example' } },
      )
      .toPromise();
    expect(created.error).toBeUndefined();
    const payload = present(created.data, 'data').createWebsite;
    expect(payload.userErrors).toEqual([]);
    const website = present(payload.website, 'website');
    expect(payload.query.websites.nodes).toContainEqual(expect.objectContaining({ id: website.id, domain: 'refetch.example' }));
    expect(payload.query.websites.totalCount).toBe(payload.query.websites.nodes.length);
    expect(sent).toHaveLength(1);
    // The list is read after the write, not alongside it.
    expect(restCalls(stack.sandbox)).toEqual(['POST /api/v1/websites', 'GET /api/v1/websites?page=1&per_page=100&sort=asc&sort_by=domain']);

    // The same through deleteWebsite: the list it answers no longer has the website.
    stack.sandbox.log.reset();
    interface DeleteData {
      deleteWebsite: { deletedId: string | null; query: { websites: { nodes: { id: string }[] } } };
    }
    const deleted = await client
      .mutation<DeleteData>(
        'mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId query { websites(perPage: 100) { nodes { id } } } } }',
        { id: website.id },
      )
      .toPromise();
    expect(deleted.error).toBeUndefined();
    const deletion = present(deleted.data, 'data').deleteWebsite;
    expect(deletion.deletedId).toBe(website.id);
    expect(deletion.query.websites.nodes.map((node) => node.id)).not.toContain(website.id);
    expect(restCalls(stack.sandbox)[0]).toBe(`DELETE /api/v1/websites/${website.id}`);
    expect(sent).toHaveLength(2);
  });
});

// --- graphcache --------------------------------------------------------------------------------

// graphcache prints each distinct warning once per module instance (a module-level set), so a
// scenario run after another that warned would print nothing and prove nothing. Each scenario
// gets its own instance of the module (the same file under another URL); @urql/core stays shared.
const graphcacheUrl = pathToFileURL(
  createRequire(import.meta.url)
    .resolve('@urql/exchange-graphcache')
    .replace(/\.js$/, '.mjs'),
).href;
let graphcacheInstances = 0;
async function freshGraphcache(): Promise<typeof import('@urql/exchange-graphcache')> {
  graphcacheInstances += 1;
  return (await import(`${graphcacheUrl}?instance=${graphcacheInstances}`)) as typeof import('@urql/exchange-graphcache');
}

interface Printed {
  warnings: string[];
  errors: string[];
}

/** console.warn and console.error, captured (and kept off the test output). */
function captureConsole(): Printed {
  const captured: Printed = { warnings: [], errors: [] };
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void captured.warnings.push(args.map(String).join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void captured.errors.push(args.map(String).join(' ')));
  return captured;
}

/** The types graphcache's "Invalid key" warnings ask a `keys` entry for, sorted, each once. */
const typesWithoutKeys = (warnings: string[]): string[] =>
  [
    ...new Set(
      warnings
        .filter((warning) => warning.startsWith('Invalid key'))
        .map((warning) => /custom `keys` config for `(\w+)`/.exec(warning)?.[1] ?? warning),
    ),
  ].sort();

/** Runs the two queries of docs/queries.md through a fresh graphcache with `config`; answers what it printed. */
async function docsQueriesThroughGraphcache(config: Partial<CacheExchangeOpts>): Promise<Printed> {
  const graphcache = await freshGraphcache();
  const printed = captureConsole();
  const client = urqlClient([graphcache.cacheExchange(config), fetchExchange]);
  const dashboard = await client.query<FixedDashboardData>(DASHBOARD, {}).toPromise();
  expect(dashboard.error).toBeUndefined();
  expect(present(dashboard.data?.website, 'website').countries.nodes.length).toBeGreaterThan(0);
  const list = await client.query<WebsiteListData>(WEBSITE_LIST, {}).toPromise();
  expect(list.error).toBeUndefined();
  expect(present(list.data, 'data').websites.nodes.length).toBeGreaterThan(0);
  // Read back from the cache alone: what was written can be read, embedded or normalized.
  const cached = client.readQuery<WebsiteListData>(WEBSITE_LIST, {});
  expect(present(cached?.data, 'cached list').websites).toEqual(present(list.data, 'data').websites);
  vi.restoreAllMocks();
  return printed;
}

describe('urql 6 with graphcache', () => {
  it("the docs dashboard selects the website's id, by which graphcache normalizes (and invalidates) a Website", () => {
    // Without it graphcache warns "Invalid key ... for `Website`" at Query.website({"id":"1"}) and keeps
    // that website apart from Website:1, where updates and invalidations go.
    const [operation] = parse(DASHBOARD).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const [website] = operation?.selectionSet.selections ?? [];
    const selected = website?.kind === Kind.FIELD ? (website.selectionSet?.selections ?? []) : [];
    expect(selected.flatMap((selection) => (selection.kind === Kind.FIELD && !selection.alias ? [selection.name.value] : []))).toContain(
      'id',
    );
  });

  it('without keys config, the docs queries print "Invalid key" for StatList, Stat, WebsiteList and DateRange', async () => {
    const printed = await docsQueriesThroughGraphcache({});
    expect(typesWithoutKeys(printed.warnings)).toEqual(['DateRange', 'Stat', 'StatList', 'WebsiteList']);
    expect(printed.warnings.length).toBeGreaterThan(100); // one per stat list and per row
  });

  it('with urqlGraphcacheConfig, they print nothing at all', async () => {
    const printed = await docsQueriesThroughGraphcache(urqlGraphcacheConfig);
    expect(printed).toEqual({ warnings: [], errors: [] });
  });

  it.each(Object.keys(urqlGraphcacheConfig.keys))('each keys entry is needed: without %s, graphcache warns about it', async (typename) => {
    const keys = Object.fromEntries(Object.entries(urqlGraphcacheConfig.keys).filter(([name]) => name !== typename));
    const printed = await docsQueriesThroughGraphcache({ ...urqlGraphcacheConfig, keys });
    expect(typesWithoutKeys(printed.warnings)).toEqual([typename]);
  });

  interface WebsiteData {
    website: { id: string; domain: string } | null;
  }
  const WEBSITE = 'query Website($id: ID!) { website(id: $id) { id domain } }';
  const DELETE = 'mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId userErrors { message } } }';

  async function createWebsite(domain: string): Promise<string> {
    const response = await stack.gql<{ createWebsite: { website: { id: string } | null } }>(
      'mutation($domain: String!) { createWebsite(input: { domain: $domain }) { website { id } } }',
      { domain },
    );
    return present(response.data?.createWebsite.website, 'created website').id;
  }

  /** Caches a website, deletes it through the client, and answers what the cache then holds for it. */
  async function deleteThroughGraphcache(config: Partial<CacheExchangeOpts>, domain: string) {
    const graphcache = await freshGraphcache();
    const printed = captureConsole();
    const id = await createWebsite(domain);
    const client = urqlClient([graphcache.cacheExchange(config), fetchExchange]);
    const sent = recordRequests();
    const read = await client.query<WebsiteData>(WEBSITE, { id }).toPromise();
    expect(read.data?.website).toEqual(expect.objectContaining({ id, domain }));
    expect(client.readQuery<WebsiteData>(WEBSITE, { id })?.data?.website?.id).toBe(id);
    const deleted = await client.mutation<{ deleteWebsite: { deletedId: string | null } }>(DELETE, { id }).toPromise();
    expect(deleted.data?.deleteWebsite.deletedId).toBe(id);
    const afterDelete = client.readQuery<WebsiteData>(WEBSITE, { id });
    // cache-first: served from the cache if it still has the website, else asked again.
    const requestsBefore = sent.length;
    const again = await client.query<WebsiteData>(WEBSITE, { id }).toPromise();
    const askedAgain = sent.length > requestsBefore;
    vi.restoreAllMocks();
    expect(printed).toEqual({ warnings: [], errors: [] });
    return { afterDelete, again, askedAgain };
  }

  it('updates.Mutation.deleteWebsite invalidates the deleted website: a later cache read no longer has it', async () => {
    const { afterDelete, again, askedAgain } = await deleteThroughGraphcache(urqlGraphcacheConfig, 'gone.example');
    expect(afterDelete?.data?.website ?? null).toBeNull();
    // So the next query goes to the gateway, which says the website is gone.
    expect(askedAgain).toBe(true);
    expect(again.data?.website ?? null).toBeNull();
    expect(again.error?.graphQLErrors.map((error) => error.extensions.code)).toEqual(['NOT_FOUND']);
  });

  it('without that update, the deleted website stays in the cache and is served from it', async () => {
    const { afterDelete, again, askedAgain } = await deleteThroughGraphcache({ keys: urqlGraphcacheConfig.keys }, 'stale.example');
    expect(afterDelete?.data?.website?.domain).toBe('stale.example');
    expect(askedAgain).toBe(false);
    expect(again.data?.website?.domain).toBe('stale.example');
  });

  it("a mutation's `query` refreshes the cached lists it selects, with no other request", async () => {
    const graphcache = await freshGraphcache();
    const printed = captureConsole();
    const client = urqlClient([graphcache.cacheExchange(urqlGraphcacheConfig), fetchExchange]);
    const LIST = '{ websites(perPage: 100, sortBy: DOMAIN, sort: ASC) { totalCount nodes { id domain } } }';
    interface ListData {
      websites: { totalCount: number; nodes: { id: string; domain: string }[] };
    }
    const before = present((await client.query<ListData>(LIST, {}).toPromise()).data, 'list').websites;
    const sent = recordRequests();
    const created = await client
      .mutation<{ createWebsite: { website: { id: string } | null } }>(
        `mutation Create($domain: String!) { createWebsite(input: { domain: $domain }) {
          website { id domain } userErrors { message }
          query { websites(perPage: 100, sortBy: DOMAIN, sort: ASC) { totalCount nodes { id domain } } } } }`,
        { domain: 'fresh-in-cache.example' },
      )
      .toPromise();
    const id = present(created.data?.createWebsite.website, 'created website').id;
    const cached = present(client.readQuery<ListData>(LIST, {})?.data, 'cached list').websites;
    expect(cached.totalCount).toBe(before.totalCount + 1);
    expect(cached.nodes).toContainEqual(expect.objectContaining({ id, domain: 'fresh-in-cache.example' }));
    const listed = await client.query<ListData>(LIST, {}).toPromise();
    expect(listed.data?.websites.totalCount).toBe(before.totalCount + 1);
    expect(sent).toHaveLength(1); // the mutation only: the list came with it and is served from the cache
    await stack.gql('mutation($id: ID!) { deleteWebsite(id: $id) { deletedId } }', { id });
    vi.restoreAllMocks();
    expect(printed).toEqual({ warnings: [], errors: [] });
  });
});
