// Persisted queries from a client's point of view, over real HTTP: automatic persisted queries (APQ)
// over POST and GET, first with fetch for the exact protocol, then with Apollo Client's
// persisted-query link and urql's persistedExchange; the bounded store (APQ_MAX_ENTRIES); trusted
// documents (PERSISTED_DOCUMENTS, TRUSTED_DOCUMENTS_ONLY) with a manifest in the form GraphQL Code
// Generator's client-preset writes (codegen.test.ts runs a generated one).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  KEY_1,
  dataOf,
  errorsOf,
  firstError,
  postGraphQL,
  present,
  restCalls,
  useStack,
  type GraphQLResponse,
  type Stack,
} from '../fixture.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const authorization = `Bearer ${KEY_1}`;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The APQ extension of a request that names its document by hash. */
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

interface GraphQLParams {
  query?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  documentId?: string;
}

/** POSTs `params` as JSON with the caller's key. */
const post = <T>(stack: Stack, params: GraphQLParams): Promise<GraphQLResponse<T>> =>
  postGraphQL<T>(stack.endpoint, params, { authorization });

/** GETs `params`, each in the query string (objects as JSON), with the caller's key. */
async function get<T>(stack: Stack, params: GraphQLParams): Promise<GraphQLResponse<T>> {
  const url = new URL(stack.endpoint);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const response = await fetch(url, { headers: { authorization, accept: 'application/graphql-response+json' } });
  const json = (await response.json()) as Omit<GraphQLResponse<T>, 'status' | 'headers'>;
  return { status: response.status, headers: response.headers, ...json };
}

type Send = <T>(stack: Stack, params: GraphQLParams) => Promise<GraphQLResponse<T>>;
const METHODS: [string, Send][] = [
  ['POST', post],
  ['GET', get],
];

interface TotalCountData {
  websites: { totalCount: number };
}
interface WebsiteData {
  website: { id: string; domain: string } | null;
}

/** The answer of a hash-only request for a document the gateway does not have. */
function expectNotFound(response: GraphQLResponse<unknown>): void {
  expect(response.data ?? null).toBeNull();
  expect(errorsOf(response).map((error) => error.message)).toEqual(['PersistedQueryNotFound']);
}

// --- What clients sent ------------------------------------------------------------------------

interface SentRequest {
  method: string;
  /** The GraphQL parameters: from the URL of a GET, from the JSON body of a POST. */
  params: GraphQLParams;
}

/** Records the requests made to `endpoint` through the global fetch (both clients use it), passing them on. */
function recordRequests(endpoint: () => string): SentRequest[] {
  const sent: SentRequest[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (request.url.startsWith(endpoint())) {
      let params: GraphQLParams;
      if (request.method === 'GET') {
        const json = (name: string): Record<string, unknown> | undefined => {
          const value = url.searchParams.get(name);
          return value === null ? undefined : (JSON.parse(value) as Record<string, unknown>);
        };
        params = { query: url.searchParams.get('query') ?? undefined, variables: json('variables'), extensions: json('extensions') };
      } else {
        params = typeof init?.body === 'string' ? (JSON.parse(init.body) as GraphQLParams) : {};
      }
      sent.push({ method: request.method, params });
    }
    return realFetch(input, init);
  });
  return sent;
}

/** What the protocol asks of each request: hash only (no document), or the document with its hash. */
function shapeOf(request: SentRequest): string {
  const hash = (request.params.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined)?.sha256Hash;
  const hasQuery = typeof request.params.query === 'string' && request.params.query.length > 0;
  if (typeof hash !== 'string') return `${request.method} without a hash`;
  expect(hash).toMatch(/^[0-9a-f]{64}$/);
  if (hasQuery) expect(hash).toBe(sha256(present(request.params.query, 'query')));
  return `${request.method} ${hasQuery ? 'document + hash' : 'hash only'}`;
}

// --- APQ: the protocol ------------------------------------------------------------------------

describe('automatic persisted queries (fetch)', () => {
  const stack = useStack();

  it.each(METHODS)(
    '%s: hash only -> PersistedQueryNotFound with no upstream call; document + hash -> runs; hash only -> runs',
    async (method, send) => {
      const query = `query Apq${method} { websites { totalCount } }`;
      const hash = sha256(query);

      const unknown = await send(stack, { extensions: persisted(hash) });
      expectNotFound(unknown);
      expect(firstError(unknown).extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(stack.sandbox.log.count).toBe(0);

      const registered = await send<TotalCountData>(stack, { query, extensions: persisted(hash) });
      expect(dataOf(registered).websites.totalCount).toBe(7);
      expect(stack.sandbox.log.count).toBe(1);

      const byHash = await send<TotalCountData>(stack, { extensions: persisted(hash) });
      expect(dataOf(byHash).websites.totalCount).toBe(7);
      expect(stack.sandbox.log.count).toBe(2);
    },
  );

  it('a document registered over POST runs by hash over GET, with other variables', async () => {
    const query = 'query ApqVariables($id: ID!) { website(id: $id) { id domain } }';
    const hash = sha256(query);
    const first = await post<WebsiteData>(stack, { query, variables: { id: '1' }, extensions: persisted(hash) });
    expect(dataOf(first).website).toEqual({ id: '1', domain: 'acme-analytics.com' });
    const second = await get<WebsiteData>(stack, { variables: { id: '2' }, extensions: persisted(hash) });
    expect(dataOf(second).website).toEqual({ id: '2', domain: 'blog.acme-analytics.com' });
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/1', 'GET /api/v1/websites/2']);
  });

  it.each(METHODS)('%s: a document sent with a hash that is not its own is refused, runs nothing and is not kept', async (method, send) => {
    const query = `query ApqMismatch${method} { websites { totalCount } }`;
    const wrongHash = sha256(`${query} `);
    const refused = await send(stack, { query, extensions: persisted(wrongHash) });
    expect(refused.data ?? null).toBeNull();
    expect(firstError(refused).message).toMatch(/PersistedQueryMismatch/);
    expect(stack.sandbox.log.count).toBe(0);
    // Kept under neither hash.
    expectNotFound(await send(stack, { extensions: persisted(wrongHash) }));
    expectNotFound(await send(stack, { extensions: persisted(sha256(query)) }));
    expect(stack.sandbox.log.count).toBe(0);
  });
});

// --- APQ: the store's bound -------------------------------------------------------------------

interface WebsiteIdData {
  website: { id: string };
}

describe('APQ registrations are kept only for a key the install accepted', () => {
  const stack = useStack();
  const query = (name: string) => `query Kept${name} { website(id: "1") { id } }`;

  it('keeps nothing sent with no key, with a key the install refuses, or by an operation that never reached the install', async () => {
    const cases: [string, Record<string, string>][] = [
      ['NoKey', {}],
      ['Refused', { authorization: 'Bearer not-a-real-key' }],
    ];
    for (const [name, headers] of cases) {
      const response = await postGraphQL(stack.endpoint, { query: query(name), extensions: persisted(sha256(query(name))) }, headers);
      expect(firstError(response).extensions?.code).toBe('UNAUTHENTICATED');
      expectNotFound(await post(stack, { extensions: persisted(sha256(query(name))) }));
    }
    // With a good key but no upstream call (nothing said the install accepts it): not kept either.
    const typename = 'query KeptTypename { __typename }';
    expect(dataOf(await post<{ __typename: string }>(stack, { query: typename, extensions: persisted(sha256(typename)) })).__typename).toBe(
      'Query',
    );
    expectNotFound(await post(stack, { extensions: persisted(sha256(typename)) }));
  });

  it('keeps a document once its operation ran and the install accepted the key', async () => {
    const accepted = query('Accepted');
    expect(dataOf(await post<WebsiteIdData>(stack, { query: accepted, extensions: persisted(sha256(accepted)) })).website.id).toBe('1');
    expect(dataOf(await post<WebsiteIdData>(stack, { extensions: persisted(sha256(accepted)) })).website.id).toBe('1');
  });
});

describe('APQ_MAX_ENTRIES', () => {
  describe('2', () => {
    const stack = useStack({ env: { APQ_MAX_ENTRIES: '2' } });

    it('registering a third document evicts the oldest: its hash-only request is not found again', async () => {
      const documents = ['A', 'B', 'C'].map((name) => `query Bounded${name} { websites { totalCount } }`);
      for (const query of documents) {
        expect(dataOf(await post<TotalCountData>(stack, { query, extensions: persisted(sha256(query)) })).websites.totalCount).toBe(7);
      }
      const [oldest, second, newest] = documents.map(sha256);
      stack.sandbox.log.reset();
      expectNotFound(await post(stack, { extensions: persisted(present(oldest, 'A')) }));
      expect(stack.sandbox.log.count).toBe(0);
      for (const hash of [second, newest]) {
        expect(dataOf(await post<TotalCountData>(stack, { extensions: persisted(present(hash, 'hash')) })).websites.totalCount).toBe(7);
      }
      // The client's answer to a miss: send the document again, and it is kept again.
      const [oldestQuery] = documents;
      await post(stack, { query: present(oldestQuery, 'A'), extensions: persisted(present(oldest, 'A')) });
      expect(dataOf(await post<TotalCountData>(stack, { extensions: persisted(present(oldest, 'A')) })).websites.totalCount).toBe(7);
    });
  });

  describe('default (1000)', () => {
    const stack = useStack();

    it('keeps 1000 documents; the 1001st evicts the oldest', async () => {
      // Documents with one upstream read each: a document is kept once the install accepted the key.
      const documents = Array.from({ length: 1001 }, (_, i) => `query Default${i} { website(id: "1") { id } }`);
      const register = (query: string) => post<WebsiteIdData>(stack, { query, extensions: persisted(sha256(query)) });
      // Documents 0 and 1 one after the other, the oldest two; the rest 50 at a time (a batch is kept in
      // the order its answers come, which a busy machine may shuffle).
      for (const query of documents.slice(0, 2)) expect(dataOf(await register(query)).website.id).toBe('1');
      for (let i = 2; i < 1000; i += 50) {
        const batch = await Promise.all(documents.slice(i, Math.min(i + 50, 1000)).map(register));
        for (const response of batch) expect(dataOf(response).website.id).toBe('1');
      }
      const byHash = (i: number) => post<WebsiteIdData>(stack, { extensions: persisted(sha256(present(documents[i], `document ${i}`))) });
      // All 1000 are kept (read from the newest down, so no read refreshes one that is checked later).
      for (let i = 999; i >= 0; i -= 111) expect(dataOf(await byHash(i)).website.id).toBe('1');
      expect(dataOf(await byHash(0)).website.id).toBe('1');
      // Document 0 was just used: the 1001st evicts the least recently used, document 1.
      await register(present(documents[1000], 'document 1000'));
      expectNotFound(await byHash(1));
      expect(dataOf(await byHash(0)).website.id).toBe('1');
      expect(dataOf(await byHash(1000)).website.id).toBe('1');
    });
  });
});

// --- APQ with real clients --------------------------------------------------------------------

const WEBSITE_QUERY = (name: string) => `query ${name}($id: ID!) { website(id: $id) { id domain } }`;

describe("Apollo Client 4's persisted-query link", () => {
  const stack = useStack();

  /** A new client, as a new browser tab would have: its own cache and hash cache. */
  function apollo(useGETForHashedQueries: boolean) {
    return new ApolloClient({
      cache: new InMemoryCache(),
      // PersistedQueryLink is what createPersistedQueryLink({ sha256 }) (deprecated in Apollo 4) returns.
      link: ApolloLink.from([
        new PersistedQueryLink({ sha256, useGETForHashedQueries }),
        new HttpLink({ uri: stack.endpoint, headers: { authorization } }),
      ]),
    });
  }

  it.each([
    ['POST', false, ['POST hash only', 'POST document + hash'], ['POST hash only']],
    // After a miss, the link sends the document over POST (it may be too long for a URL).
    ['GET', true, ['GET hash only', 'POST document + hash'], ['GET hash only']],
  ])(
    '%s: a first client registers its query after PersistedQueryNotFound, a second one runs it by hash',
    async (name, useGET, firstShapes, secondShapes) => {
      const query = gql(WEBSITE_QUERY(`Apollo${name}`));
      const sent = recordRequests(() => stack.endpoint);
      const first = await apollo(useGET).query<WebsiteData>({ query, variables: { id: '4' } });
      expect(first.data?.website).toEqual({ __typename: 'Website', id: '4', domain: 'docs.acme-analytics.com' });
      expect(sent.map(shapeOf)).toEqual(firstShapes);
      expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/4']);

      sent.length = 0;
      const second = await apollo(useGET).query<WebsiteData>({ query, variables: { id: '5' } });
      expect(second.data?.website).toEqual({ __typename: 'Website', id: '5', domain: 'northwind-outfitters.com' });
      expect(sent.map(shapeOf)).toEqual(secondShapes);
    },
  );
});

describe("urql's persistedExchange", () => {
  const stack = useStack();

  it.each([
    ['omitted (urql: GET within the URL limit)', undefined, 'GET'],
    ['true', true, 'GET'],
    ['false', false, 'POST'],
  ] as const)(
    'preferGetForPersistedQueries %s: hash only, PersistedQueryNotFound, document + hash; then a new client runs it by hash',
    async (_name, preferGet, method) => {
      const options = preferGet === undefined ? {} : { preferGetForPersistedQueries: preferGet };
      const client = () =>
        new Client({
          url: stack.endpoint,
          exchanges: [cacheExchange, persistedExchange(options), fetchExchange],
          fetchOptions: { headers: { authorization } },
        });
      const query = WEBSITE_QUERY(`Urql${method}${preferGet === undefined ? 'Default' : String(preferGet)}`);
      const sent = recordRequests(() => stack.endpoint);

      const first = await client().query<WebsiteData>(query, { id: '7' }).toPromise();
      expect(first.error).toBeUndefined();
      expect(first.data?.website).toMatchObject({ id: '7', domain: 'tailspin-travel.com' });
      expect(sent.map(shapeOf)).toEqual([`${method} hash only`, `${method} document + hash`]);
      expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/7']);

      sent.length = 0;
      const second = await client().query<WebsiteData>(query, { id: '8' }).toPromise();
      expect(second.error).toBeUndefined();
      expect(second.data?.website).toMatchObject({ id: '8', domain: 'status.acme-analytics.com' });
      expect(sent.map(shapeOf)).toEqual([`${method} hash only`]);
    },
  );
});

// --- Trusted documents ------------------------------------------------------------------------

// A manifest as client-preset writes it (persisted-documents.json): "sha256:<hex>" -> document.
const TRUSTED_WEBSITE = 'query TrustedWebsite($id: ID!) { website(id: $id) { id domain } }';
const TRUSTED_LIST = 'query TrustedList { websites(perPage: 25) { totalCount nodes { id } } }';
const manifestDir = mkdtempSync(join(tmpdir(), 'gateway-trusted-'));
const manifestPath = join(manifestDir, 'persisted-documents.json');
writeFileSync(
  manifestPath,
  JSON.stringify(Object.fromEntries([TRUSTED_WEBSITE, TRUSTED_LIST].map((document) => [`sha256:${sha256(document)}`, document])), null, 2),
);
afterAll(() => rmSync(manifestDir, { recursive: true, force: true }));

describe('PERSISTED_DOCUMENTS', () => {
  const stack = useStack({ env: { PERSISTED_DOCUMENTS: manifestPath } });

  it.each(METHODS)('%s: runs a manifest document by its hash (hex, without "sha256:"), with variables', async (_method, send) => {
    const response = await send<WebsiteData>(stack, { variables: { id: '2' }, extensions: persisted(sha256(TRUSTED_WEBSITE)) });
    expect(dataOf(response).website).toEqual({ id: '2', domain: 'blog.acme-analytics.com' });
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/2']);
  });

  it('still runs other documents, and APQ', async () => {
    expect(dataOf(await stack.gql<TotalCountData>('{ websites { totalCount } }')).websites.totalCount).toBe(7);
    const query = 'query NotInManifest { websites { totalCount } }';
    expectNotFound(await post(stack, { extensions: persisted(sha256(query)) }));
    dataOf(await post(stack, { query, extensions: persisted(sha256(query)) }));
    expect(dataOf(await post<TotalCountData>(stack, { extensions: persisted(sha256(query)) })).websites.totalCount).toBe(7);
  });
});

describe('PERSISTED_DOCUMENTS with TRUSTED_DOCUMENTS_ONLY=true', () => {
  const stack = useStack({ env: { PERSISTED_DOCUMENTS: manifestPath, TRUSTED_DOCUMENTS_ONLY: 'true' } });

  /** A refusal: HTTP 400 or a GraphQL error, no data, and nothing sent upstream. */
  function expectRefused(response: GraphQLResponse<unknown>): void {
    expect(response.data ?? null).toBeNull();
    expect(errorsOf(response).length).toBeGreaterThan(0);
    expect(stack.sandbox.log.count).toBe(0);
  }

  it.each(METHODS)('%s: runs the manifest documents by hash', async (_method, send) => {
    const website = await send<WebsiteData>(stack, { variables: { id: '1' }, extensions: persisted(sha256(TRUSTED_WEBSITE)) });
    expect(dataOf(website).website).toEqual({ id: '1', domain: 'acme-analytics.com' });
    const list = await send<TotalCountData>(stack, { extensions: persisted(sha256(TRUSTED_LIST)) });
    expect(dataOf(list).websites.totalCount).toBe(7);
  });

  it('runs a manifest document by `documentId: "sha256:<hex>"` (GraphQL over HTTP, persisted documents)', async () => {
    const response = await post<WebsiteData>(stack, { documentId: `sha256:${sha256(TRUSTED_WEBSITE)}`, variables: { id: '1' } });
    expect(dataOf(response).website).toEqual({ id: '1', domain: 'acme-analytics.com' });
  });

  it.each(METHODS)('%s: refuses a document that is not in the manifest, with nothing upstream', async (_method, send) => {
    const refused = await send(stack, { query: '{ websites { totalCount } }' });
    expectRefused(refused);
    expect([200, 400]).toContain(refused.status);
  });

  it('refuses APQ registration of another document: its hash stays unknown', async () => {
    const query = 'query Smuggled { websites { totalCount } }';
    expectNotFound(await post(stack, { extensions: persisted(sha256(query)) }));
    expectRefused(await post(stack, { query, extensions: persisted(sha256(query)) }));
    expectNotFound(await post(stack, { extensions: persisted(sha256(query)) }));
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('an unknown hash is PersistedQueryNotFound, with nothing upstream', async () => {
    expectNotFound(await get(stack, { extensions: persisted(sha256('query Unknown { websites { totalCount } }')) }));
    expect(stack.sandbox.log.count).toBe(0);
  });
});
