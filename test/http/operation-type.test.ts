// A request is a subscription's stream by its operation, not by what it asks to be answered with: the
// operation's type as read before admission, and what the server does with it (a query asking for an
// event stream waits in the MAX_ACTIVE_REQUESTS line; a subscription does not).
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { operationTypeIn, operationTypeOf } from '../../src/http/operation-type.js';
import { KEY_1, postGraphQL, startStack, type Stack } from '../fixture.js';
import { openSubscription } from '../live/sse.js';

describe('operationTypeIn', () => {
  it.each([
    ['{ websites { totalCount } }', null, 'query'],
    ['query { a }', null, 'query'],
    ['query Q { a }', null, 'query'],
    ['mutation M($id: ID!) { deleteWebsite(id: $id) { deletedId } }', null, 'mutation'],
    ['subscription Live($id: ID!) { website(id: $id) { id } }', null, 'subscription'],
    ['subscription { website(id: "1") { id } }', null, 'subscription'],
    ['subscription @skip(if: false) { a }', null, 'subscription'],
    ['subscription ($id: ID! = "1") { a }', null, 'subscription'],
    // Braces, brackets and names inside variable defaults, arguments and directives are not definitions.
    ['subscription S($f: F = {query: {a: [1, 2]}}) @d(mutation: {x: 1}) { a(query: "mutation { b }") { query } }', null, 'subscription'],
    // A fragment before the operation, and one after it.
    ['fragment F on Website { id } subscription S { website(id: "1") { ...F } } fragment G on Stat { count }', null, 'subscription'],
    // Comments and strings that read like operations.
    ['# subscription S { a }\nquery Q { a(s: """subscription { b }""") }', null, 'query'],
    // operationName picks among several.
    ['query A { a } subscription B { b } mutation C { c }', 'B', 'subscription'],
    ['query A { a } subscription B { b } mutation C { c }', 'C', 'mutation'],
    ['query A { a } subscription B { b }', 'A', 'query'],
    // Unfinished: it is still one subscription (which yoga refuses, briefly).
    ['subscription { a', null, 'subscription'],
  ] as const)('%s (%s): %s', (document, operationName, type) => {
    expect(operationTypeIn(document, operationName)).toBe(type);
  });

  it.each([
    ['query A { a } subscription B { b }', null], // several and no name: GraphQL refuses it too
    ['query A { a }', 'B'], // no such operation
    ['fragment F on Website { id }', null], // no operation
    ['subscription S { a } }', null], // one brace too many
    ['subscription "unterminated', null], // does not lex
    ['', null],
  ] as const)('%s (%s): none to tell', (document, operationName) => {
    expect(operationTypeIn(document, operationName)).toBeNull();
  });
});

describe('operationTypeOf', () => {
  const request = (method: string, url: string, body?: string, contentType = 'application/json') =>
    ({
      method,
      url,
      headers: { 'content-type': contentType },
      ...(body === undefined ? {} : { body: Buffer.from(body) }),
    }) as unknown as IncomingMessage & { body?: Uint8Array };

  it('reads a POST body (JSON, or application/graphql), a GET query string, and tells none without a document', () => {
    const subscription = 'subscription Live { website(id: "1") { id } }';
    expect(operationTypeOf(request('POST', '/graphql', JSON.stringify({ query: subscription })))).toBe('subscription');
    expect(
      operationTypeOf(request('POST', '/graphql', JSON.stringify({ query: `query A { a } ${subscription}`, operationName: 'A' }))),
    ).toBe('query');
    expect(operationTypeOf(request('POST', '/graphql', subscription, 'application/graphql'))).toBe('subscription');
    const get = new URLSearchParams({ query: `query A { a } ${subscription}`, operationName: 'Live' });
    expect(operationTypeOf(request('GET', `/graphql?${get}`))).toBe('subscription');
    // An APQ hash, a persisted document's id, a batch, a body that is not JSON, no body.
    const hashOnly = { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } };
    expect(operationTypeOf(request('POST', '/graphql', JSON.stringify(hashOnly)))).toBeNull();
    expect(operationTypeOf(request('POST', '/graphql', JSON.stringify({ documentId: 'sha256:abc' })))).toBeNull();
    expect(operationTypeOf(request('POST', '/graphql', JSON.stringify([{ query: subscription }])))).toBeNull();
    expect(operationTypeOf(request('POST', '/graphql', '{"query":'))).toBeNull();
    expect(operationTypeOf(request('POST', '/graphql', 'null'))).toBeNull();
    expect(operationTypeOf(request('POST', '/graphql'))).toBeNull();
    expect(operationTypeOf(request('GET', '/graphql'))).toBeNull();
  });
});

describe('streams by operation', () => {
  let running: Stack | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it("a query asking for an event stream waits in the MAX_ACTIVE_REQUESTS line; a subscription, GraphiQL's GET included, does not", async () => {
    // One slot, no line: while a slow query holds the slot, any other request is turned away at once.
    running = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', LIVE_INTERVAL_S: '60' },
      sandbox: { latencyMs: 1_500 },
    });
    const stack = running;
    const auth = { authorization: `Bearer ${KEY_1}` };
    const slow = stack.gql<{ websites: { totalCount: number } }>('{ websites { totalCount } }');
    while (stack.sandbox.log.inFlight < 1) await new Promise((resolve) => setTimeout(resolve, 10));

    // A query over SSE: a request like any other, turned away (503 OVERLOADED) as the line is full.
    const queryOverSse = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...auth },
      body: JSON.stringify({ query: '{ website(id: "1") { id } }' }),
    });
    expect(queryOverSse.status).toBe(503);
    expect(await queryOverSse.json()).toMatchObject({ errors: [{ extensions: { code: 'OVERLOADED' } }] });
    // So is a plain query, of course.
    expect((await postGraphQL(stack.endpoint, { query: '{ website(id: "1") { id } }' }, auth)).status).toBe(503);

    // A subscription takes a stream's place instead: it is answered while the slot is still held.
    const live = await openSubscription<{ website: { id: string } }>(
      stack.endpoint,
      { query: 'subscription Live($id: ID!) { website(id: $id) { id } }', variables: { id: '1' } },
      KEY_1,
    );
    expect(live.response.status).toBe(200);
    // GraphiQL's subscription: a GET with the document in the query string.
    const url = new URL(stack.endpoint);
    url.searchParams.set('query', 'query Q { websites { totalCount } } subscription Live { website(id: "2") { id } }');
    url.searchParams.set('operationName', 'Live');
    const abort = new AbortController();
    const graphiql = await fetch(url, { headers: { accept: 'text/event-stream', ...auth }, signal: abort.signal });
    expect(graphiql.status).toBe(200);
    expect(graphiql.headers.get('content-type')).toMatch(/^text\/event-stream/);
    abort.abort();
    expect((await live.next(5_000))?.data?.website.id).toBe('1');
    live.close();

    expect((await slow).status).toBe(200);
    // With the slot free, the query over SSE is answered, as a stream of one result.
    const answered = await openSubscription<{ website: { id: string } }>(stack.endpoint, { query: '{ website(id: "1") { id } }' }, KEY_1);
    expect(answered.response.status).toBe(200);
    expect((await answered.next(5_000))?.data?.website.id).toBe('1');
    expect(await answered.next(5_000)).toBeNull();
    expect(answered.endedBy).toBe('complete');
  });
});
