// The gateway as a subgraph (FEDERATION=on) behind the real Hive Gateway, composed with a billing
// subgraph whose invoices name websites by id (router.ts): the joined query with the caller's key
// forwarded, no key, another user's website, what the router's batching leaves of the upstream reads,
// and the gateway's own queries, mutations and limits through the router.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_1, KEY_2, dataOf, errorsOf, postGraphQL, restCalls, useStack, type GraphQLResponse } from '../fixture.js';
import { startSupergraph, type Supergraph } from './router.js';

interface InvoiceData {
  id: string;
  website: { id: string; domain: string; stats?: { totalCount: number } } | null;
}
type Invoices = { invoices: InvoiceData[] };

const stack = useStack({ env: { FEDERATION: 'on' } });
let supergraph: Supergraph | undefined;
beforeAll(async () => {
  supergraph = await startSupergraph(stack.endpoint);
}, 60_000);
afterAll(() => supergraph?.close());

/** POSTs to the router with `key` (KEY_1 by default; null: no Authorization header). */
function viaRouter<T>(query: string, key: string | null = KEY_1): Promise<GraphQLResponse<T>> {
  if (!supergraph) throw new Error('the supergraph starts in beforeAll');
  return postGraphQL<T>(supergraph.endpoint, { query }, key === null ? {} : { authorization: `Bearer ${key}` });
}

const invoices = (ids: string[], count: number, selection = 'id domain') =>
  `{ invoices(websiteIds: ${JSON.stringify(ids)}, count: ${count}) { id website { ${selection} } } }`;

describe('a query joining invoices with their websites through Hive Gateway', () => {
  it("answers each invoice's website with the caller's key, forwarded by the router", async () => {
    const query = invoices(['1', '2'], 4, 'id domain stats(name: PAGE, period: TODAY) { totalCount }');
    const joined = dataOf(await viaRouter<Invoices>(query)).invoices;
    const direct = dataOf(
      await stack.gql<Record<string, { domain: string; stats: { totalCount: number } }>>(
        '{ a: website(id: "1") { domain stats(name: PAGE, period: TODAY) { totalCount } } b: website(id: "2") { domain stats(name: PAGE, period: TODAY) { totalCount } } }',
      ),
    );
    expect(joined.map((invoice) => invoice.website)).toEqual([
      { id: '1', ...direct.a },
      { id: '2', ...direct.b },
      { id: '1', ...direct.a },
      { id: '2', ...direct.b },
    ]);
    stack.sandbox.log.reset();
    // Another key sees its own websites only: the router forwards each caller's key, not one of its own.
    const other = await viaRouter<Invoices>(invoices(['3', '1'], 2), KEY_2);
    expect(other.data?.invoices.map((invoice) => invoice.website?.id ?? null)).toEqual(['3', null]);
    expect(new Set(stack.sandbox.log.entries.map((entry) => entry.headers.authorization))).toEqual(new Set([`Bearer ${KEY_2}`]));
    // The router fetched the subgraphs and nothing else, and the key went to the analytics subgraph only.
    expect(new Set(supergraph?.fetched)).toEqual(new Set([supergraph?.billingEndpoint, stack.endpoint]));
    expect(new Set(supergraph?.billingAuthorizations)).toEqual(new Set([null]));
  });

  it('answers UNAUTHENTICATED for every website when the caller sends no key, with no upstream call', async () => {
    const response = await viaRouter<Invoices>(invoices(['1', '2'], 3), null);
    expect(response.data?.invoices.map((invoice) => invoice.website)).toEqual([null, null, null]);
    const codes = new Set(errorsOf(response).map((error) => error.extensions?.code));
    expect(codes).toEqual(new Set(['UNAUTHENTICATED']));
    expect(stack.sandbox.log.count).toBe(0);
  });

  it("answers null with NOT_FOUND, and none of its data, for another user's website and an unknown id", async () => {
    const response = await viaRouter<Invoices>(invoices(['1', '3', '999999'], 3));
    const [own, others, unknown] = response.data?.invoices ?? [];
    expect(own?.website?.id).toBe('1');
    expect([others?.website, unknown?.website]).toEqual([null, null]);
    expect(errorsOf(response).map((error) => [error.path?.slice(0, 3), error.extensions?.code])).toEqual([
      [['invoices', 1, 'website'], 'NOT_FOUND'],
      [['invoices', 2, 'website'], 'NOT_FOUND'],
    ]);
    const third = dataOf(await stack.gql<{ website: { domain: string } }>('{ website(id: "3") { domain } }', {}, KEY_2)).website;
    expect(JSON.stringify(response)).not.toContain(third.domain);
  });

  it('reads each website once however many invoices name it: 50 invoices of 3 websites, 3 website reads', async () => {
    const response = await viaRouter<Invoices>(invoices(['1', '2', '8'], 50));
    const websiteIds = dataOf(response).invoices.map((invoice) => invoice.website?.id);
    expect(websiteIds).toEqual(Array.from({ length: 50 }, (_, i) => ['1', '2', '8'][i % 3]));
    expect(restCalls(stack.sandbox).sort()).toEqual(['GET /api/v1/websites/1', 'GET /api/v1/websites/2', 'GET /api/v1/websites/8']);
  });
});

describe("the gateway's own schema through the router", () => {
  it('answers queries as the gateway does', async () => {
    const query = '{ websites(perPage: 25, sortBy: DOMAIN, sort: ASC) { totalCount nodes { id domain } } node(id: "2") { id } }';
    expect(dataOf(await viaRouter(query))).toEqual(dataOf(await stack.gql(query)));
  });

  it('runs mutations', async () => {
    type Created = { createWebsite: { website: { id: string; domain: string } | null; userErrors: unknown[] } };
    const created = dataOf(
      await viaRouter<Created>(
        'mutation { createWebsite(input: { domain: "federated.example" }) { website { id domain } userErrors { code } } }',
      ),
    ).createWebsite;
    expect(created).toMatchObject({ website: { domain: 'federated.example' }, userErrors: [] });
    const id = created.website?.id;
    type Deleted = { deleteWebsite: { deletedId: string | null } };
    const deleted = await viaRouter<Deleted>(`mutation { deleteWebsite(id: "${id}") { deletedId } }`);
    expect(dataOf(deleted).deleteWebsite.deletedId).toBe(id);
  });

  it("leaves out the payloads' query field, which a router cannot plan; the gateway itself keeps it", async () => {
    const mutation = 'mutation { deleteWebsite(id: "999999") { userErrors { code } query { __typename } } }';
    const direct = dataOf(await stack.gql<{ deleteWebsite: { query: { __typename: string } } }>(mutation));
    expect(direct.deleteWebsite.query).toEqual({ __typename: 'Query' });
    const routed = await viaRouter(mutation);
    expect(errorsOf(routed)[0]?.message).toMatch(/Cannot query field "query" on type "DeleteWebsitePayload"/);
  });

  it("passes the router's documents for operations within the limits: 30 aliases, its own aliases and __typename", async () => {
    // 15 root fields and 15 entity fetches, 30 aliases in all (MAX_ALIASES): the router sends the root
    // fields batched under aliases of its own (_v0_website …) and the websites through _entities.
    const roots = Array.from({ length: 15 }, (_, i) => `w${i}: website(id: "${(i % 2) + 1}") { domain }`);
    const joined = Array.from({ length: 15 }, (_, i) => `i${i}: invoices(websiteIds: ["8"], count: 2) { website { __typename domain } }`);
    const response = await viaRouter<Record<string, unknown>>(`{ ${[...roots, ...joined].join(' ')} }`);
    const data = dataOf(response);
    expect(Object.keys(data)).toHaveLength(30);
    expect(data.i14).toEqual([
      { website: { __typename: 'Website', domain: expect.any(String) } },
      { website: { __typename: 'Website', domain: expect.any(String) } },
    ]);
    // The most tokens a router adds: 30 root fields whose arguments, defaults included, it sends as
    // variables ($_v0_websiteId, $_v0_sortBy …), several times the client's tokens.
    const stats = Array.from({ length: 30 }, (_, i) => `s${i}: stats(websiteId: "1", name: PAGE, period: TODAY) { totalCount }`);
    expect(Object.keys(dataOf(await viaRouter(`{ ${stats.join(' ')} }`)))).toHaveLength(30);
  });
});
