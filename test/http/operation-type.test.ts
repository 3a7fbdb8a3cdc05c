// A request is a subscription's stream by its operation, not by what it asks to be answered with: the
// operation's type as read before admission, and what the server does with it (a query asking for an
// event stream waits in the MAX_ACTIVE_REQUESTS line; a subscription does not).
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { streamsSubscription } from '../../src/http-headers.js';
import { contentTypeIs, operationTypeIn, parsedLater, readOperation } from '../../src/http/operation-type.js';
import { KEY_1, KEY_2, dataOf, postGraphQL, startStack, type Stack } from '../fixture.js';
import { openSubscription } from '../live/sse.js';

// The gateway a test of this file started, closed when it ends.
let running: Stack | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

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

  it('tells a document met again (remembered, not lexed again) by the operation each request names', () => {
    const document = `query A { a } subscription B { b } mutation C { c } # ${Math.random()}`;
    for (let round = 0; round < 3; round++) {
      expect(operationTypeIn(document, 'B')).toBe('subscription');
      expect(operationTypeIn(document, 'C')).toBe('mutation');
      expect(operationTypeIn(document, 'A')).toBe('query');
      expect(operationTypeIn(document, 'D')).toBeNull();
      expect(operationTypeIn(document, null)).toBeNull();
    }
    const broken = `subscription "unterminated ${Math.random()}`;
    for (let round = 0; round < 2; round++) expect(operationTypeIn(broken, null)).toBeNull();
  });

  it('tells every document right when many more than it remembers come, each twice', () => {
    const types = ['query', 'mutation', 'subscription'] as const;
    const documents = Array.from(
      { length: 3_000 },
      (_, i) => [`${types[i % 3]} Op${i} { field${'x'.repeat(300)} }`, types[i % 3]] as const,
    );
    for (const [document, type] of [...documents, ...documents]) expect(operationTypeIn(document, null)).toBe(type);
  });
});

describe('readOperation', () => {
  const request = (method: string, url: string, body?: string, contentType = 'application/json') =>
    ({
      method,
      url,
      headers: { 'content-type': contentType },
      ...(body === undefined ? {} : { body: Buffer.from(body) }),
    }) as unknown as IncomingMessage & { body?: Uint8Array };

  it('reads a POST body (JSON, or application/graphql), a GET query string, and tells none without a document', () => {
    const subscription = 'subscription Live { website(id: "1") { id } }';
    expect(readOperation(request('POST', '/graphql', JSON.stringify({ query: subscription }))).type).toBe('subscription');
    expect(
      readOperation(request('POST', '/graphql', JSON.stringify({ query: `query A { a } ${subscription}`, operationName: 'A' }))).type,
    ).toBe('query');
    expect(readOperation(request('POST', '/graphql', subscription, 'application/graphql')).type).toBe('subscription');
    const get = new URLSearchParams({ query: `query A { a } ${subscription}`, operationName: 'Live' });
    expect(readOperation(request('GET', `/graphql?${get}`)).type).toBe('subscription');
    // An APQ hash, a persisted document's id, a batch, a body that is not JSON, no body.
    const hashOnly = { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } };
    expect(readOperation(request('POST', '/graphql', JSON.stringify(hashOnly))).type).toBeNull();
    expect(readOperation(request('POST', '/graphql', JSON.stringify({ documentId: 'sha256:abc' }))).type).toBeNull();
    expect(readOperation(request('POST', '/graphql', JSON.stringify([{ query: subscription }]))).type).toBeNull();
    expect(readOperation(request('POST', '/graphql', '{"query":')).type).toBeNull();
    expect(readOperation(request('POST', '/graphql', 'null')).type).toBeNull();
    expect(readOperation(request('POST', '/graphql')).type).toBeNull();
    expect(readOperation(request('GET', '/graphql')).type).toBeNull();
  });

  it('hands yoga a JSON body it parsed when it is a non-empty object; any other body keeps its bytes', () => {
    // As the HTTP layer makes the request's body: parsed before admission, or known and parsed when asked.
    const handedOver = (body: string, contentType?: string): unknown => {
      const req = request('POST', '/graphql', body, contentType);
      const read = readOperation(req);
      return read.parsedBody ?? (read.parseLater ? parsedLater(req) : undefined) ?? req.body;
    };
    const query = { query: '{ __typename }', variables: { a: [1] } };
    expect(handedOver(JSON.stringify(query))).toEqual(query);
    expect(handedOver(JSON.stringify(query), 'application/graphql+json; charset=utf-8')).toEqual(query);
    const bytes = (body: string) => Buffer.from(body);
    // What yoga refuses (or reads otherwise) it still reads from the bytes: an empty object, a batch, a
    // JSON string holding a request, null, a body that is not JSON, a query sent as application/graphql.
    for (const body of ['{}', JSON.stringify([query]), JSON.stringify(JSON.stringify(query)), 'null', '{"query":']) {
      expect(handedOver(body)).toEqual(bytes(body));
    }
    expect(handedOver('{ __typename }', 'application/graphql')).toEqual(bytes('{ __typename }'));
  });

  it('a JSON body seen before is known without parsing it, and still handed to yoga parsed, an object of its own', () => {
    const body = JSON.stringify({ query: 'subscription Again { a }', variables: { n: [1, 2] } });
    const first = request('POST', '/graphql', body);
    const firstRead = readOperation(first);
    expect(firstRead).toEqual({ type: 'subscription', parsedBody: JSON.parse(body) });
    // The same text again: its kind is remembered, and nothing is parsed before admission.
    const again = request('POST', '/graphql', body);
    const againRead = readOperation(again);
    expect(againRead).toEqual({ type: 'subscription', parseLater: true });
    const parsed = parsedLater(again);
    expect(parsed).toEqual(JSON.parse(body));
    expect(parsed).not.toBe(firstRead.parsedBody);
    // Bodies of one length that differ in a byte, one after the other: each read for what it says.
    const [one, other] = ['subscription Twin { a }', 'query        Twin { a }'].map((query) => JSON.stringify({ query }));
    for (let round = 0; round < 3; round++) {
      expect(readOperation(request('POST', '/graphql', one)).type).toBe('subscription');
      expect(readOperation(request('POST', '/graphql', one)).type).toBe('subscription');
      expect(readOperation(request('POST', '/graphql', other, 'application/graphql+json')).type).toBe('query');
    }
    // What is not handed over (a batch) keeps its bytes when it comes again.
    const batch = JSON.stringify([{ query: 'subscription Again { a }' }]);
    for (let round = 0; round < 2; round++) {
      const req = request('POST', '/graphql', batch);
      const read = readOperation(req);
      expect(read).toEqual({ type: null });
    }
  });
});

describe('a POST body through the gateway', () => {
  it('is answered as yoga answers its bytes: an object runs; a JSON string, an empty object, null or a batch is refused', async () => {
    running = await startStack();
    const post = async (body: string) => {
      const response = await fetch(running?.endpoint ?? '', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
        body,
      });
      return { status: response.status, text: await response.text() };
    };
    const ok = await post(JSON.stringify({ query: 'query Q { website(id: "1") { id } }', operationName: 'Q' }));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).data).toEqual({ website: { id: '1' } });
    const asString = await post(JSON.stringify(JSON.stringify({ query: '{ __typename }' })));
    expect(asString.status).toBe(400);
    expect(asString.text).toContain('POST body is expected to be object but received string');
    const refusals = await Promise.all(['{}', 'null', '[{"query":"{ __typename }"}]'].map(post));
    expect(refusals.map(({ text }) => JSON.parse(text).errors[0].message)).toEqual([
      'Must provide query string.',
      'POST body is expected to be object but received null',
      'Batching is not supported.',
    ]);
    expect(refusals.map(({ status }) => status)).toEqual([200, 400, 400]);
  });
});

describe("yoga's rules", () => {
  it.each([
    [undefined, true],
    ['', true],
    ['*/*', true],
    ['text/*', true],
    ['text/event-stream', true],
    ['application/json, text/event-stream;q=0.5', true],
    ['TEXT/EVENT-STREAM', true],
    ['application/json', false],
    ['application/graphql-response+json', false],
    ['multipart/mixed', false],
    ['text/event-stream; charset=latin1', false],
  ] as const)('a subscription asked with Accept %s is streamed: %s', (accept, streamed) => {
    expect(streamsSubscription(accept)).toBe(streamed);
  });

  it('reads a Content-Type as yoga does: the first of a list, alone or with parameters, as sent', () => {
    expect(contentTypeIs('application/graphql, application/json', 'application/graphql')).toBe(true);
    expect(contentTypeIs('application/graphql, application/json', 'application/json')).toBe(false);
    expect(contentTypeIs('application/json; charset=utf-8', 'application/json')).toBe(true);
    expect(contentTypeIs('application/jsonx', 'application/json')).toBe(false);
    expect(contentTypeIs('Application/JSON', 'application/json')).toBe(false);
    expect(contentTypeIs(undefined, 'application/json')).toBe(false);
  });
});

/** A request over node:http, which sends no Accept of its own; `ended` says when its answer ended (from the start). */
function rawPost(
  endpoint: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string; received: (text: string) => Promise<string>; ended: Promise<number> }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      endpoint,
      { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        let text = '';
        const waiting = new Set<() => void>();
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          for (const wake of waiting) wake();
        });
        // Resolves with all that came once it holds `expected`, or once the answer ended.
        const received = (expected: string) =>
          new Promise<string>((got) => {
            const check = () => (text.includes(expected) || res.complete ? got(text) : undefined);
            waiting.add(check);
            res.once('end', check);
            check();
          });
        const ended = new Promise<number>((done) => res.once('close', () => done(performance.now() - started)));
        res.on('error', () => undefined);
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', received, ended });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('streams by operation', () => {
  it("a query asking for an event stream waits in the MAX_ACTIVE_REQUESTS line; a subscription, GraphiQL's GET included, does not", async () => {
    // One slot, no line: while a slow query holds the slot, any other request is turned away at once.
    running = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', LIVE_INTERVAL_S: '60' },
      sandbox: { latencyMs: 1_500 },
    });
    const stack = running;
    const auth = { authorization: `Bearer ${KEY_1}` };
    // The install accepts the key: its subscriptions take a stream's place at once from now on.
    expect((await stack.gql('{ website(id: "1") { id } }')).status).toBe(200);
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
    // A key the install has not accepted yet proves it first, as a request: in line (full, here).
    const stranger = await openSubscription(stack.endpoint, { query: 'subscription { website(id: "3") { id } }' }, KEY_2);
    expect(stranger.response.status).toBe(503);
    expect(await stranger.response.json()).toMatchObject({ errors: [{ extensions: { code: 'OVERLOADED' } }] });

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

  it('a subscription is a stream whatever its Accept (none, */*, text/*), bound as streams are; one that cannot be streamed is refused', async () => {
    running = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', LIVE_INTERVAL_S: '60', LIVE_MAX_LIFETIME_S: '2' },
      sandbox: { latencyMs: 300 },
    });
    const stack = running;
    // The install accepts the key: its subscriptions take a stream's place at once from now on.
    expect((await stack.gql('{ website(id: "1") { id } }')).status).toBe(200);
    const slow = stack.gql(
      '{ a: websites { totalCount } b: website(id: "1") { c: stats(name: PAGE, period: LAST_30_DAYS) { totalCount } } }',
    );
    while (stack.sandbox.log.inFlight < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    const body = JSON.stringify({ query: 'subscription Live { website(id: "1") { id } }' });
    const json = { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` };
    // The slot is held and the line is full: only a stream's place lets these in.
    const accepts: Record<string, string>[] = [{}, { accept: '*/*' }, { accept: 'text/*' }];
    const streams = await Promise.all(accepts.map((accept) => rawPost(stack.endpoint, body, { ...json, ...accept })));
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      expect(await stream.received('event: next')).toContain('event: next');
    }
    // A subscription that rules out an event stream is refused at once, never run as a request.
    const refused = await rawPost(stack.endpoint, body, { ...json, accept: 'application/json' });
    expect(refused.status).toBe(406);
    expect(JSON.parse(await refused.received('}]}'))).toMatchObject({ errors: [{ extensions: { code: 'NOT_ACCEPTABLE' } }] });
    // LIVE_MAX_LIFETIME_S ends them (between 90 % and all of 2 s).
    for (const stream of streams) expect(await stream.ended).toBeLessThan(4_000);
    await slow;
  });

  it('a query is a request whatever it says: a Content-Type list read as application/graphql, a hash asking for SSE', async () => {
    running = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', LIVE_INTERVAL_S: '60' },
      sandbox: { latencyMs: 1_000 },
    });
    const stack = running;
    const auth = { authorization: `Bearer ${KEY_1}` };
    const slow = stack.gql('{ websites { totalCount } }');
    while (stack.sandbox.log.inFlight < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    // yoga reads the first entry, application/graphql: this is a query, and the line is full.
    const listed = await rawPost(stack.endpoint, '{ website(id: "1") { id } }', {
      'content-type': 'application/graphql, application/json',
      accept: 'text/event-stream',
      ...auth,
    });
    expect(listed.status).toBe(503);
    // A hash alone says nothing of its operation: it waits in line as any request.
    const hashOnly = JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'b'.repeat(64) } } });
    const hashed = await rawPost(stack.endpoint, hashOnly, { 'content-type': 'application/json', accept: 'text/event-stream', ...auth });
    expect(hashed.status).toBe(503);
    expect((await slow).status).toBe(200);
  });

  it('a subscription found by its hash leaves its slot for a stream: a query still gets in beside it', async () => {
    const query = 'subscription Hashed { website(id: "2") { id } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    // A trusted document: the request carries its hash alone, and the HTTP layer cannot tell what it is.
    const directory = await mkdtemp(join(tmpdir(), 'gateway-documents-'));
    const manifest = join(directory, 'persisted-documents.json');
    await writeFile(manifest, JSON.stringify({ [sha256Hash]: query }));
    running = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', LIVE_INTERVAL_S: '60', PERSISTED_DOCUMENTS: manifest },
    });
    const stack = running;
    const persistedQuery = { version: 1, sha256Hash };
    const byHash = await openSubscription<{ website: { id: string } }>(stack.endpoint, { extensions: { persistedQuery } }, KEY_1);
    expect(byHash.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await byHash.next(5_000);
    expect(first?.errors).toBeUndefined();
    expect(first?.data?.website.id).toBe('2');
    // One slot, no line: the query gets in only if the stream gave its slot back.
    expect(dataOf(await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }')).website.id).toBe('1');
    byHash.close();
    await rm(directory, { recursive: true });
  });
});
