// Every limit refuses with its own code and the limit in `extensions`, a message naming the limit and
// its setting (never "Syntax Error", which stays for text that is not GraphQL), the usage figures of
// every answer (all zero: nothing ran), and no upstream call. Over HTTP against the gateway.
import { describe, expect, it } from 'vitest';
import { KEY_1, firstError, postGraphQL, useStack, type GraphQLErrorJson } from '../fixture.js';

const stack = useStack();

const NOTHING_RAN = { cost: { requested: 0, limit: 100 }, upstreamCalls: 0, cache: { hits: 0, misses: 0, stale: 0 } };

const times = (n: number, text: (i: number) => string): string => Array.from({ length: n }, (_, i) => text(i)).join(' ');

describe('limits on the document', () => {
  it.each([
    {
      limit: 'depth',
      // The schema has no cycles: introspection is the way down.
      query: `{ __type(name: "Website") { ${'ofType { '.repeat(15)}name${' }'.repeat(15)} } }`,
      message: /^This operation nests fields 17 deep; the limit is 15 \(MAX_DEPTH\)\./,
      extensions: { code: 'DEPTH_LIMIT_EXCEEDED', depthLimit: 15, depth: 17 },
    },
    {
      limit: 'aliases',
      query: `{ website(id: "1") { ${times(31, (i) => `a${i}: domain`)} } }`,
      message: /^This operation uses 31 aliases; the limit is 30 \(MAX_ALIASES\)\./,
      extensions: { code: 'ALIAS_LIMIT_EXCEEDED', aliasLimit: 30, aliases: 31 },
    },
    {
      limit: 'directives',
      query: `{ website(id: "1") { ${times(21, () => 'domain @include(if: true)')} } }`,
      message: /^This operation uses 21 directives; the limit is 20 \(MAX_DIRECTIVES\)\./,
      extensions: { code: 'DIRECTIVE_LIMIT_EXCEEDED', directiveLimit: 20, directives: 21 },
    },
    {
      limit: 'tokens',
      query: `{ website(id: "1") { ${times(2001, () => 'domain')} } }`,
      message: /^This document has more than 2000 tokens \(names, punctuation and values\); the limit is 2000 \(MAX_TOKENS\)\./,
      extensions: { code: 'TOKEN_LIMIT_EXCEEDED', tokenLimit: 2000 },
    },
  ])('$limit: $extensions.code with the limit, HTTP 400, nothing run', async ({ query, message, extensions }) => {
    const response = await stack.gql<unknown>(query);
    expect(response.status).toBe(400);
    expect(response.errors).toHaveLength(1);
    const error = firstError(response);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('Syntax Error');
    expect(error.extensions).toEqual(extensions);
    expect(response.extensions).toEqual(NOTHING_RAN);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('each operation over a limit is named by its own error', async () => {
    const query = `query A { website(id: "1") { ${times(31, (i) => `a${i}: domain`)} } } query B { website(id: "1") { ${times(32, (i) => `b${i}: id`)} } }`;
    const response = await postGraphQL<unknown>(stack.endpoint, { query, operationName: 'A' }, { authorization: `Bearer ${KEY_1}` });
    expect(response.errors?.map((error) => error.extensions?.aliases)).toEqual([31, 32]);
  });

  it('text that is not GraphQL is still a syntax error (GRAPHQL_PARSE_FAILED), with the usage figures', async () => {
    const response = await stack.gql<unknown>('{ website(id: "1") { domain }');
    expect(response.status).toBe(400);
    expect(firstError(response).message).toMatch(/^Syntax Error: /);
    expect(firstError(response).extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(response.extensions).toEqual(NOTHING_RAN);
  });
});

describe('the cost of an operation', () => {
  it('COST_LIMIT_EXCEEDED with the cost and the limit', async () => {
    const query = `{ websites(perPage: 100) { nodes { stats(name: PAGE, from: "2026-02-14", to: "2026-03-15") { totalCount } } } }`;
    const response = await stack.gql<unknown>(query);
    expect(firstError(response).extensions).toEqual({ code: 'COST_LIMIT_EXCEEDED', cost: 101, costLimit: 100 });
    expect(response.extensions).toEqual({ ...NOTHING_RAN, cost: { requested: 101, limit: 100 } });
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('the request body', () => {
  /** POSTs `body` (a stream goes chunked, with no Content-Length); answers the status and the JSON. */
  async function postBody(body: BodyInit): Promise<{ status: number; json: { errors: GraphQLErrorJson[]; extensions?: unknown } }> {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body,
      duplex: 'half',
    } as RequestInit);
    return { status: response.status, json: (await response.json()) as { errors: GraphQLErrorJson[]; extensions?: unknown } };
  }

  it('over MAX_BODY_BYTES: 413 BODY_LIMIT_EXCEEDED with the limit', async () => {
    const { status, json } = await postBody(
      JSON.stringify({ query: '{ websites { totalCount } }', variables: { pad: 'x'.repeat(70_000) } }),
    );
    expect(status).toBe(413);
    expect(json.errors).toEqual([
      {
        message: 'The request body is larger than the 65536-byte limit (MAX_BODY_BYTES).',
        extensions: { code: 'BODY_LIMIT_EXCEEDED', bodyLimit: 65536 },
      },
    ]);
    expect(json.extensions).toEqual(NOTHING_RAN);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('chunked, with no length to check: 411 LENGTH_REQUIRED with the limit', async () => {
    const { status, json } = await postBody(new Blob([JSON.stringify({ query: '{ websites { totalCount } }' })]).stream());
    expect(status).toBe(411);
    expect(json.errors).toEqual([
      {
        message: 'Send the request body with a Content-Length header: bodies are limited to 65536 bytes (MAX_BODY_BYTES).',
        extensions: { code: 'LENGTH_REQUIRED', bodyLimit: 65536 },
      },
    ]);
    expect(json.extensions).toEqual(NOTHING_RAN);
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('the other answers given before anything ran', () => {
  it.each([
    {
      title: 'a mutation over GET (405)',
      url: `?query=${encodeURIComponent('mutation { deleteWebsite(id: "1") { deletedId } }')}`,
      init: { method: 'GET' },
    },
    { title: 'a batch (400)', init: { method: 'POST', body: JSON.stringify([{ query: '{ websites { totalCount } }' }]) } },
    { title: 'a body that is not JSON (400)', init: { method: 'POST', body: '{ nope' } },
    { title: 'a PUT (405)', init: { method: 'PUT', body: JSON.stringify({ query: '{ websites { totalCount } }' }) } },
  ])('$title carries the usage figures, all zero', async ({ url = '', init }) => {
    const response = await fetch(`${stack.endpoint}${url}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY_1}`, 'content-type': 'application/json' },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const json = (await response.json()) as { errors: GraphQLErrorJson[]; extensions?: unknown };
    expect(json.errors.length).toBeGreaterThan(0);
    expect(json.extensions).toEqual(NOTHING_RAN);
    expect(stack.sandbox.log.count).toBe(0);
  });
});
