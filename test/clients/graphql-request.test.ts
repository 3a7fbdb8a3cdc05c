// graphql-request 7 against the gateway with its defaults: POST (JSON), or GET with `method: 'GET'`
// (the operation in the URL; no Content-Type, no CSRF header, only Accept and the key).
import { ClientError, GraphQLClient } from 'graphql-request';
import { describe, expect, it } from 'vitest';
import { KEY_1, present, useStack } from '../fixture.js';

const stack = useStack();

interface SentRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
}

/** A GraphQLClient as an app makes one, and the HTTP requests it sent (its fetch, observed). */
function graphqlRequest(method: 'GET' | 'POST' | undefined, key: string | null = KEY_1): { client: GraphQLClient; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const observedFetch: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    sent.push({ method: init?.method ?? 'GET', url, headers: Object.fromEntries(new Headers(init?.headers).entries()) });
    return fetch(input, init);
  };
  const client = new GraphQLClient(stack.endpoint, {
    fetch: observedFetch,
    ...(method === undefined ? {} : { method }),
    ...(key === null ? {} : { headers: { authorization: `Bearer ${key}` } }),
  });
  return { client, sent };
}

/** The error codes of a graphql-request failure. */
async function failureCodes(promise: Promise<unknown>): Promise<unknown[]> {
  const error: unknown = await promise.then(
    () => new Error('the request succeeded'),
    (e: unknown) => e,
  );
  if (!(error instanceof ClientError)) throw new Error(`expected a ClientError, got ${String(error)}`);
  return (error.response.errors ?? []).map((e) => e.extensions?.code);
}

interface StatRow {
  value: string;
  count: number;
}
interface DashboardData {
  website: { domain: string; visitors: { nodes: StatRow[] }; countries: { nodes: StatRow[] } } | null;
}
const DASHBOARD = `query Dashboard($id: ID!) {
  website(id: $id) {
    domain
    visitors: stats(name: VISITOR, from: "2026-02-14", to: "2026-03-15", sortBy: VALUE, sort: ASC, perPage: 50) { nodes { value count } }
    countries: stats(name: COUNTRY, from: "2026-02-14", to: "2026-03-15") { nodes { value count } }
  }
}`;

interface CreateData {
  createWebsite: {
    website: { id: string; domain: string } | null;
    userErrors: { message: string }[];
    query: { websites: { totalCount: number } };
  };
}
const CREATE_AND_COUNT = `mutation CreateAndCount($domain: String!) {
  createWebsite(input: { domain: $domain }) { website { id domain } userErrors { message } query { websites { totalCount } } }
}`;

describe('graphql-request 7 with its defaults', () => {
  it.each(['GET', 'POST', undefined] as const)('the dashboard with method %s: answered', async (method) => {
    const { client, sent } = graphqlRequest(method);
    const data = await client.request<DashboardData>(DASHBOARD, { id: '1' });
    const website = present(data.website, 'website');
    expect(website.domain).toBe('acme-analytics.com');
    expect(website.visitors.nodes).toHaveLength(30);
    expect(website.countries.nodes.length).toBeGreaterThan(0);
    const [request] = sent;
    expect(sent).toHaveLength(1);
    expect(request?.method).toBe(method ?? 'POST');
    expect(stack.sandbox.log.count).toBe(3);
  });

  it('GET puts the operation in the URL and sends no Content-Type and no CSRF header', async () => {
    const { client, sent } = graphqlRequest('GET');
    await client.request<DashboardData>(DASHBOARD, { id: '1' });
    const request = present(sent[0], 'the request');
    expect(request.url.searchParams.get('query')).toContain('website(id: $id)');
    expect(JSON.parse(request.url.searchParams.get('variables') ?? 'null')).toEqual({ id: '1' });
    expect(request.url.searchParams.get('operationName')).toBe('Dashboard');
    expect(Object.keys(request.headers).sort()).toEqual(['accept', 'authorization']);
  });

  it.each(['GET', 'POST'] as const)("rawRequest with %s: the answer's extensions (cost, upstream calls)", async (method) => {
    const { client } = graphqlRequest(method);
    const response = await client.rawRequest<DashboardData>(DASHBOARD, { id: '1' });
    expect(response.status).toBe(200);
    expect(present(response.data.website, 'website').domain).toBe('acme-analytics.com');
    expect(response.extensions).toMatchObject({ cost: { requested: 3, limit: 100 }, upstreamCalls: 3 });
  });

  it.each(['GET', 'POST'] as const)('without a key, with %s: UNAUTHENTICATED, and nothing reaches the upstream', async (method) => {
    const { client } = graphqlRequest(method, null);
    expect(await failureCodes(client.request<DashboardData>(DASHBOARD, { id: '1' }))).toContain('UNAUTHENTICATED');
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('an error of the gateway is a ClientError with its code', async () => {
    const { client } = graphqlRequest('GET');
    expect(await failureCodes(client.request<DashboardData>(DASHBOARD, { id: '3' }))).toEqual(['NOT_FOUND']);
  });

  it("a mutation from a GET client goes as POST (graphql-request's rule), and its payload's query answers the new total", async () => {
    const { client, sent } = graphqlRequest('GET');
    const before = (await client.request<{ websites: { totalCount: number } }>('{ websites { totalCount } }')).websites.totalCount;
    const data = await client.request<CreateData>(CREATE_AND_COUNT, { domain: 'graphql-request.example' });
    expect(data.createWebsite.userErrors).toEqual([]);
    expect(present(data.createWebsite.website, 'website').domain).toBe('graphql-request.example');
    expect(data.createWebsite.query.websites.totalCount).toBe(before + 1);
    expect(sent.map((request) => request.method)).toEqual(['GET', 'POST']);
  });

  it("an update's payload query reads the website as the write left it, in the same round trip", async () => {
    const { client } = graphqlRequest('POST');
    interface UpdateData {
      updateWebsite: {
        website: { favorite: boolean | null } | null;
        userErrors: { message: string }[];
        query: { website: { id: string; favorite: boolean | null } | null; favorites: { nodes: { id: string }[] } };
      };
    }
    const data = await client.request<UpdateData>(
      `mutation Favorite($id: ID!) {
        updateWebsite(id: $id, input: { favorite: true }) {
          website { favorite }
          userErrors { message }
          query { website(id: $id) { id favorite } favorites: websites(favorite: true, perPage: 100) { nodes { id } } }
        }
      }`,
      { id: '2' },
    );
    expect(data.updateWebsite.userErrors).toEqual([]);
    expect(data.updateWebsite.website?.favorite).toBe(true);
    expect(data.updateWebsite.query.website).toEqual({ id: '2', favorite: true });
    expect(data.updateWebsite.query.favorites.nodes.map((node) => node.id)).toContain('2');
  });

  it("a delete's payload query no longer lists the website", async () => {
    const { client } = graphqlRequest('POST');
    const created = await client.request<CreateData>(CREATE_AND_COUNT, { domain: 'deleted-by-graphql-request.example' });
    const id = present(created.createWebsite.website, 'website').id;
    interface DeleteData {
      deleteWebsite: { deletedId: string | null; query: { websites: { totalCount: number; nodes: { id: string }[] } } };
    }
    const data = await client.request<DeleteData>(
      'mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId query { websites(perPage: 100) { totalCount nodes { id } } } } }',
      { id },
    );
    expect(data.deleteWebsite.deletedId).toBe(id);
    expect(data.deleteWebsite.query.websites.totalCount).toBe(created.createWebsite.query.websites.totalCount - 1);
    expect(data.deleteWebsite.query.websites.nodes.map((node) => node.id)).not.toContain(id);
  });
});
