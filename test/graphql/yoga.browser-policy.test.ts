// What a browser, and a page on another site, can and cannot do with the gateway. Every query works
// with plain fetch's defaults (GET with the operation in the URL, POST with JSON; no CSRF header);
// what stays true: nothing without a key reaches the upstream, a mutation never runs over GET, a
// cross-site form POST (the content types a page may send without a CORS preflight) runs nothing,
// and CORS lets only the right origins read answers.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { KEY_1, present, useStack, type Stack } from '../fixture.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** One HTTP request with exactly these headers (undici adds none of its own that matter here). */
async function send(url: string, method: 'GET' | 'POST' | 'OPTIONS', headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const response = await request(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: response.statusCode, headers: flat, text: await response.body.text() };
}

interface GraphQLBody<T> {
  data?: T | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
}

const bodyOf = <T>(answer: Answer): GraphQLBody<T> => JSON.parse(answer.text) as GraphQLBody<T>;
const codesOf = (answer: Answer): unknown[] => (bodyOf<unknown>(answer).errors ?? []).map((e) => e.extensions?.code);
const authorization = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** The endpoint with an operation in its query string, as a GET sends it. */
function getUrl(endpoint: string, query: string, variables?: Record<string, unknown>, operationName?: string): string {
  const params = new URLSearchParams({ query });
  if (variables !== undefined) params.set('variables', JSON.stringify(variables));
  if (operationName !== undefined) params.set('operationName', operationName);
  return `${endpoint}?${params.toString()}`;
}

interface WebsiteData {
  website: { domain: string; visitors: { nodes: { value: string; count: number }[] } } | null;
}
const WEBSITE = `query Website($id: ID!) {
  website(id: $id) { domain visitors: stats(name: VISITOR, from: "2026-03-01", to: "2026-03-15") { nodes { value count } } }
}`;
const DELETE_1 = 'mutation { deleteWebsite(id: "1") { deletedId } }';

const stack = useStack();

describe('plain fetch with its defaults', () => {
  it('GET with the operation in the query string, the key its only header: answered', async () => {
    const response = await fetch(getUrl(stack.endpoint, WEBSITE, { id: '1' }, 'Website'), { headers: authorization(KEY_1) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as GraphQLBody<WebsiteData>;
    expect(body.errors).toBeUndefined();
    expect(present(body.data?.website, 'website').domain).toBe('acme-analytics.com');
    expect(stack.sandbox.log.count).toBe(2);
  });

  it('POST with a JSON body: answered', async () => {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { ...authorization(KEY_1), 'content-type': 'application/json' },
      body: JSON.stringify({ query: WEBSITE, variables: { id: '1' } }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as GraphQLBody<WebsiteData>;
    expect(present(body.data?.website, 'website').visitors.nodes).toHaveLength(10);
  });

  it.each([
    ['GET', () => send(getUrl(stack.endpoint, WEBSITE, { id: '1' }), 'GET')],
    ['GET with JSON accept', () => send(getUrl(stack.endpoint, WEBSITE, { id: '1' }), 'GET', { accept: 'application/json' })],
    [
      'POST',
      () =>
        send(stack.endpoint, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ query: WEBSITE, variables: { id: '1' } })),
    ],
  ])('%s without a key: UNAUTHENTICATED, and nothing reaches the upstream', async (_how, go) => {
    const answer = await go();
    expect(codesOf(answer)).toContain('UNAUTHENTICATED');
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('a mutation never runs over GET', () => {
  it.each([
    ['alone', getUrl('', DELETE_1)],
    [
      'named by operationName among queries',
      getUrl('', `query Q { websites { totalCount } } mutation M ${DELETE_1.slice('mutation '.length)}`, undefined, 'M'),
    ],
  ])('%s: 405, and nothing reaches the upstream', async (_how, query) => {
    const answer = await send(`${stack.endpoint}${query}`, 'GET', authorization(KEY_1));
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toContain('POST');
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('a cross-site form POST does nothing', () => {
  // What a page on another site can make a browser send without a preflight, each body asking to
  // delete website 1. None of it is run: 415, key or not, and the upstream sees nothing.
  const boundary = '----formboundary7MA4YWxkTrZu0gW';
  const forms: [string, Record<string, string>, string][] = [
    [
      'application/x-www-form-urlencoded',
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ query: DELETE_1 }).toString(),
    ],
    [
      'multipart/form-data',
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      `--${boundary}\r\nContent-Disposition: form-data; name="query"\r\n\r\n${DELETE_1}\r\n--${boundary}--\r\n`,
    ],
    ['text/plain', { 'content-type': 'text/plain;charset=UTF-8' }, JSON.stringify({ query: DELETE_1 })],
    ['no Content-Type', {}, JSON.stringify({ query: DELETE_1 })],
  ];

  it.each(
    forms.flatMap(([type, headers, body]) => [
      [type, 'with a key', { ...headers, ...authorization(KEY_1) }, body] as const,
      [type, 'without a key', headers, body] as const,
    ]),
  )('%s, %s: 415, and nothing reaches the upstream', async (_type, _key, headers, body) => {
    const answer = await send(stack.endpoint, 'POST', { ...headers, origin: 'https://evil.example' }, body);
    expect(answer.status).toBe(415);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('the website those forms asked to delete is still there', async () => {
    const answer = await send(getUrl(stack.endpoint, WEBSITE, { id: '1' }), 'GET', authorization(KEY_1));
    expect(present(bodyOf<WebsiteData>(answer).data?.website, 'website').domain).toBe('acme-analytics.com');
  });
});

// --- CORS -------------------------------------------------------------------------------------

const APOLLO_PREFLIGHT_HEADERS = [
  'authorization',
  'content-type',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
];

const preflight = (on: Stack, origin: string): Promise<Answer> =>
  send(on.endpoint, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': APOLLO_PREFLIGHT_HEADERS.join(', '),
  });

/** A JSON POST with the key from a page of `origin` (the request a browser makes after the preflight). */
const postFrom = (on: Stack, origin: string | null): Promise<Answer> =>
  send(
    on.endpoint,
    'POST',
    { ...authorization(KEY_1), 'content-type': 'application/json', ...(origin === null ? {} : { origin }) },
    JSON.stringify({ query: '{ websites { totalCount } }' }),
  );

const listed = (header: string | undefined): string[] => (header ?? '').split(',').map((item) => item.trim().toLowerCase());

function expectVaryOrigin(answer: Answer): void {
  expect(listed(answer.headers.vary)).toContain('origin');
}

async function expectAllowed(on: Stack, origin: string): Promise<void> {
  const before = await preflight(on, origin);
  expect(before.status, `preflight from ${origin}`).toBeGreaterThanOrEqual(200);
  expect(before.status, `preflight from ${origin}`).toBeLessThan(300);
  expect(before.headers['access-control-allow-origin']).toBe(origin);
  expect(listed(before.headers['access-control-allow-methods'])).toContain('post');
  const allowedHeaders = listed(before.headers['access-control-allow-headers']);
  for (const header of APOLLO_PREFLIGHT_HEADERS) expect(allowedHeaders, `allowed headers for ${origin}`).toContain(header);
  expectVaryOrigin(before);

  const answer = await postFrom(on, origin);
  expect(answer.status).toBe(200);
  expect(answer.headers['access-control-allow-origin']).toBe(origin);
  expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  expectVaryOrigin(answer);
}

async function expectRefused(on: Stack, origin: string): Promise<void> {
  const before = await preflight(on, origin);
  expect(before.headers['access-control-allow-origin'], `preflight from ${origin}`).toBeUndefined();
  expect(before.headers['access-control-allow-headers']).toBeUndefined();
  // Still answered (the server does not know who asks): the browser alone withholds it from the page.
  const answer = await postFrom(on, origin);
  expect(answer.headers['access-control-allow-origin'], `answer to ${origin}`).toBeUndefined();
  expectVaryOrigin(answer);
}

describe('CORS outside production, by default (NODE_ENV unset, no CORS_ORIGINS)', () => {
  it.each(['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:8080', 'http://localhost'])(
    'a page of %s may call it: the preflight answered 2xx with the headers Apollo sends, the answer readable',
    (origin) => expectAllowed(stack, origin),
  );

  it.each([
    'https://evil.example',
    'https://localhost:5173',
    'http://localhost.evil.example:5173',
    'http://127.0.0.1.evil.example',
    'null',
  ])('a page of %s gets no access-control-allow-origin', (origin) => expectRefused(stack, origin));

  it.each([
    ['http://localhost:5173', 'http://localhost:5173'],
    ['https://evil.example', undefined],
  ])('a refusal made before GraphQL runs (413) to a page of %s: access-control-allow-origin %s, Vary: Origin', async (origin, allowed) => {
    const oversized = JSON.stringify({ query: `{ websites { totalCount } } # ${'x'.repeat(70_000)}` });
    const answer = await send(stack.endpoint, 'POST', { ...authorization(KEY_1), 'content-type': 'application/json', origin }, oversized);
    expect(answer.status).toBe(413);
    expect(answer.headers['access-control-allow-origin']).toBe(allowed);
    expectVaryOrigin(answer);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('an answer to a request without Origin carries Vary: Origin too (a shared cache must not reuse it for a page)', async () => {
    expectVaryOrigin(await postFrom(stack, null));
    expectVaryOrigin(await send(getUrl(stack.endpoint, '{ websites { totalCount } }'), 'GET', authorization(KEY_1)));
  });
});

describe('CORS_ORIGINS=https://app.example.com outside production', () => {
  const named = useStack({ env: { CORS_ORIGINS: 'https://app.example.com' } });
  it('allows https://app.example.com', () => expectAllowed(named, 'https://app.example.com'));
  it('not another origin', () => expectRefused(named, 'https://evil.example'));
});

describe('NODE_ENV=production with CORS_ORIGINS=https://app.example.com', () => {
  const production = useStack({ env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.com' } });
  it('allows https://app.example.com', () => expectAllowed(production, 'https://app.example.com'));
  it.each(['http://localhost:5173', 'http://127.0.0.1:8080', 'https://evil.example'])('not %s', (origin) =>
    expectRefused(production, origin),
  );
});
