// The path for known operations (graphql/known-operations.ts) must answer exactly as yoga does: the same
// requests through a gateway whose operations become known (compiled at their first run, as every test
// stack is) and through one where none ever does (GRAPHQL_JIT_ON_RUN=0), compared over HTTP: status, the
// headers a client or a cache reads, and the body. Which requests reach yoga is counted by wrapping the
// path's `answer` (undefined: yoga answers): a known query answered again never does; every check that refuses it still does, with
// yoga's errors; and what the path does not serve (a trace, @defer, a subscription, a mutation) goes to
// yoga from the first request on. With the cache on, it stores the answers it gives, and a GET's carries
// its ETag (or is a 304).
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { formOf } from '../../src/graphql/known-operations.js';
import { jsonAnswerType } from '../../src/http-headers.js';
import { FIXED_DASHBOARD, KEY_1, UPDATE_WEBSITE, startStack, type Stack } from '../fixture.js';

const reachedYoga = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/graphql/known-operations.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/graphql/known-operations.js')>();
  return {
    ...real,
    createKnownOperations: (options: Parameters<typeof real.createKnownOperations>[0]) => {
      const known = real.createKnownOperations(options);
      return {
        ...known,
        answer: (...args: Parameters<typeof known.answer>) => {
          const answered = known.answer(...args);
          const toYoga = () => {
            reachedYoga.count++;
            return undefined;
          };
          if (answered === undefined) return toYoga();
          return answered.then((answer) => answer ?? toYoga());
        },
      };
    },
  };
});

const RANGE = 'from: "2026-02-14", to: "2026-03-15"';
const DASHBOARD = `query Dashboard { website(id: "1") { id domain privacy
  visitors: stats(name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC, perPage: 50) { nodes { value count } totalCount }
  pages: stats(name: PAGE, ${RANGE}) { nodes { value count } totalCount pageInfo { hasNextPage lastPage page perPage } }
  countries: stats(name: COUNTRY, ${RANGE}) { nodes { value count } } } }`;
const WITH_VARIABLES = `query Page($id: ID!, $name: StatName!, $from: Date!, $perPage: Int) { website(id: $id) { domain
  stats(name: $name, from: $from, to: "2026-03-15", perPage: $perPage) { nodes { value count } totalCount } } }`;
const GOOD = { id: '1', name: 'PAGE', from: '2026-02-14', perPage: 10 };

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

/** The headers a client or a cache reads (not Date, Connection, Keep-Alive). */
const READ_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'vary',
  'etag',
  'x-content-type-options',
  'referrer-policy',
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
  'access-control-allow-credentials',
];

async function send(stack: Stack, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}`, ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: Object.fromEntries(READ_HEADERS.map((name) => [name, response.headers.get(name)])),
    body: await response.text(),
  };
}

/** A logger at info whose lines go into `lines`, parsed. */
function loggingInto(lines: Record<string, unknown>[]): Logger {
  return pino(
    { level: 'info', base: null },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
}

/** A GET of the endpoint with these parameters (variables and extensions as JSON). */
async function sendGet(stack: Stack, params: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${stack.endpoint}?${new URLSearchParams(params)}`, {
    headers: { authorization: `Bearer ${KEY_1}`, accept: 'application/graphql-response+json', ...headers },
  });
  return {
    status: response.status,
    headers: Object.fromEntries(READ_HEADERS.map((name) => [name, response.headers.get(name)])),
    body: await response.text(),
  };
}

/**
 * Sends `body` to the standard stack, then three times to the known one, whose every answer must equal the
 * standard one's; with how many of those three reached yoga.
 */
async function sameAsYoga(
  known: Stack,
  standard: Stack,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer & { toYoga: number }> {
  const expected = await send(standard, body, headers);
  const before = reachedYoga.count;
  for (let run = 0; run < 3; run++) expect(await send(known, body, headers)).toEqual(expected);
  return { ...expected, toYoga: reachedYoga.count - before };
}

describe('known operations over HTTP', () => {
  let known: Stack;
  let standard: Stack;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = loggingInto(lines);
    [known, standard] = await Promise.all([
      startStack({ env: { MAX_COST: '40', CORS_ORIGINS: 'https://app.example', LOG_LEVEL: 'info' }, gateway: { logger } }),
      startStack({ env: { MAX_COST: '40', CORS_ORIGINS: 'https://app.example', GRAPHQL_JIT_ON_RUN: '0' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([known?.close(), standard?.close()]);
  });
  beforeEach(() => {
    reachedYoga.count = 0;
    lines.length = 0;
  });

  it('answers a query run before without yoga, with the bytes and headers yoga gives', async () => {
    // The first run made it known (compiled at once in the tests): the two after it never reached yoga.
    const answer = await sameAsYoga(known, standard, { query: DASHBOARD });
    expect(JSON.parse(answer.body)).not.toHaveProperty('errors');
    expect(answer.toYoga).toBe(1);
    const calls = known.sandbox.log.entries.length;
    await send(known, { query: DASHBOARD });
    expect(known.sandbox.log.entries.length - calls).toBe(4);
  });

  it('answers in the JSON type the Accept asks for, as yoga chooses it', async () => {
    for (const accept of [
      'application/graphql-response+json',
      'application/json',
      '*/*',
      'application/json, application/graphql-response+json',
    ]) {
      const answer = await sameAsYoga(known, standard, { query: DASHBOARD, operationName: 'Dashboard' }, { accept });
      expect(answer.headers['content-type']).toBe(`${jsonAnswerType(accept)}; charset=utf-8`);
    }
  });

  it('answers a page of an allowed origin with the CORS headers yoga gives, and another origin without', async () => {
    for (const origin of ['https://app.example', 'http://localhost:5173', 'https://elsewhere.example']) {
      const answer = await sameAsYoga(known, standard, { query: DASHBOARD }, { origin });
      expect(answer.toYoga).toBe(0);
      expect(answer.headers['access-control-allow-origin']).toBe(origin === 'https://elsewhere.example' ? null : origin);
    }
  });

  it('runs a known operation with other variables, and leaves to yoga those it refuses, with its errors', async () => {
    expect((await sameAsYoga(known, standard, { query: WITH_VARIABLES, variables: GOOD })).toYoga).toBe(1);
    expect(
      (await sameAsYoga(known, standard, { query: WITH_VARIABLES, variables: { ...GOOD, name: 'COUNTRY', perPage: 25 } })).toYoga,
    ).toBe(0);
    // An argument the gateway refuses (BAD_USER_INPUT), a variable the Date scalar refuses, a missing one.
    const refused = [
      { ...GOOD, perPage: 100_000 },
      { ...GOOD, from: '14/02/2026' },
      { id: '1', name: 'PAGE' },
    ];
    for (const variables of refused) {
      const answer = await sameAsYoga(known, standard, { query: WITH_VARIABLES, variables });
      expect(JSON.parse(answer.body)).toHaveProperty('errors');
      expect(answer.toYoga).toBe(3);
    }
  });

  it('leaves to yoga a known operation whose variables cost more than MAX_COST', async () => {
    const query =
      'query Sites($perPage: Int) { websites(perPage: $perPage) { nodes { id stats(name: PAGE, from: "2026-03-01", to: "2026-03-15") { totalCount } } } }';
    expect((await sameAsYoga(known, standard, { query, variables: { perPage: 10 } })).toYoga).toBe(1);
    const answer = await sameAsYoga(known, standard, { query, variables: { perPage: 50 } });
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('COST_LIMIT_EXCEEDED');
    expect(answer.toYoga).toBe(3);
  });

  it('answers a refused or missing key as yoga does, with no upstream call made twice', async () => {
    await send(known, { query: DASHBOARD });
    for (const [authorization, code] of [
      ['Bearer sandbox-key-999', 'UNAUTHENTICATED'],
      ['Bearer not a key', 'UNAUTHENTICATED'],
      ['', 'UNAUTHENTICATED'],
    ]) {
      const before = known.sandbox.log.entries.length;
      const answer = await sameAsYoga(known, standard, { query: DASHBOARD }, { authorization: authorization ?? '' });
      expect(JSON.parse(answer.body).errors[0].extensions.code).toBe(code);
      // Yoga formats what the known path ran: each request asked the upstream once per read at most.
      expect(known.sandbox.log.entries.length - before).toBeLessThanOrEqual(3 * 4);
    }
  });

  it('hands an answer with errors to yoga, which formats it without asking the upstream again', async () => {
    const query = '{ website(id: "999999") { id domain } }';
    await send(known, { query });
    reachedYoga.count = 0;
    const before = known.sandbox.log.entries.length;
    const answer = await sameAsYoga(known, standard, { query });
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('NOT_FOUND');
    expect(known.sandbox.log.entries.length - before).toBe(3);
  });

  it('answers a GET as yoga does, and leaves to yoga parameters that do not parse', async () => {
    const params = { query: WITH_VARIABLES, variables: JSON.stringify(GOOD) };
    const expected = await sendGet(standard, params);
    const before = reachedYoga.count;
    for (let run = 0; run < 3; run++) expect(await sendGet(known, params)).toEqual(expected);
    expect(JSON.parse(expected.body)).not.toHaveProperty('errors');
    // Known from the POSTs before: the same form, whichever method brings it.
    expect(reachedYoga.count - before).toBe(0);
    const broken = { query: WITH_VARIABLES, variables: '{"id": ' };
    const refused = await sendGet(standard, broken);
    for (let run = 0; run < 2; run++) expect(await sendGet(known, broken)).toEqual(refused);
    // yoga's own parser answered 500 here; now a clear 400.
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body).errors[0]).toMatchObject({
      message: 'The variables parameter of this GET is not valid JSON.',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(reachedYoga.count - before).toBe(3);
  });

  it('never takes what it does not serve: a trace, @defer, a mutation', async () => {
    await send(known, { query: DASHBOARD });
    reachedYoga.count = 0;
    await send(known, { query: DASHBOARD }, { 'x-gateway-trace': '1' });
    const deferred = `query Deferred { website(id: "1") { id ... @defer { domain } } }`;
    for (let run = 0; run < 2; run++) await send(known, { query: deferred }, { accept: 'multipart/mixed' });
    const refusedWrite = 'mutation { createWebsite(input: { domain: "not a domain" }) { userErrors { code } } }';
    for (let run = 0; run < 2; run++) await send(known, { query: refusedWrite });
    expect(reachedYoga.count).toBe(5);
  });

  it('never answers a subscription: it streams from yoga, or is refused as one that cannot be', async () => {
    const subscription = { query: 'subscription Live { website(id: "1") { id domain } }' };
    for (let run = 0; run < 2; run++) {
      const refused = await sameAsYoga(known, standard, subscription, { accept: 'application/json' });
      expect(refused.status).toBe(406);
    }
    reachedYoga.count = 0;
    for (let run = 0; run < 2; run++) {
      const stream = new AbortController();
      const response = await fetch(known.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${KEY_1}` },
        body: JSON.stringify(subscription),
        signal: stream.signal,
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      stream.abort();
    }
    expect(reachedYoga.count).toBe(2);
  });

  it('keeps the documents limits: a document over them is refused every time, never known', async () => {
    const tooMany = `{ ${Array.from({ length: 120 }, (_, i) => `a${i}: website(id: "1") { id }`).join(' ')} }`;
    const answer = await sameAsYoga(known, standard, { query: tooMany });
    expect(JSON.parse(answer.body).errors.length).toBeGreaterThan(0);
    expect(answer.toYoga).toBe(3);
  });

  it('logs a known answer with the same fields as yoga does', async () => {
    await send(known, { query: DASHBOARD, operationName: 'Dashboard' });
    const [first] = lines.splice(0);
    await send(known, { query: DASHBOARD, operationName: 'Dashboard' });
    const [second] = lines.splice(0);
    expect(reachedYoga.count).toBe(0);
    expect(Object.keys(second ?? {})).toEqual(Object.keys(first ?? {}));
    const { time: _t1, durationMs: _d1, ...firstFields } = first ?? {};
    const { time: _t2, durationMs: _d2, ...secondFields } = second ?? {};
    expect(secondFields).toEqual(firstFields);
    expect(secondFields).toMatchObject({ operation: 'Dashboard', upstreamCalls: 4, cost: 4, outcome: 'ok', msg: 'graphql request' });
  });
});

describe('the form of a request', () => {
  it('is its text or its hash alone, with its operation name', () => {
    expect(formOf({ query: '{ a }' })).toBe('q\n{ a }');
    expect(formOf({ query: '{ a }', operationName: 'A', variables: { x: 1 } })).toBe('qA\n{ a }');
    expect(formOf({ extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } })).toBe('h\nab');
    expect(formOf({ query: '{ a }', extensions: { clientLibrary: { name: 'x' } } })).toBe('q\n{ a }');
  });

  it('is none for what yoga alone should read', () => {
    expect(formOf({ query: '{ a }', extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } })).toBeUndefined();
    expect(formOf({ query: '{ a }', operationName: 3 })).toBeUndefined();
    expect(formOf({ query: '{ a }', variables: [1] })).toBeUndefined();
    expect(formOf({ query: '{ a }', variables: 'x' })).toBeUndefined();
    expect(formOf({ extensions: { persistedQuery: { version: 2, sha256Hash: 'ab' } } })).toBeUndefined();
    expect(formOf({ documentId: 'x' })).toBeUndefined();
  });

  it('answers JSON only where yoga would', () => {
    expect(jsonAnswerType(undefined)).toBe('application/json');
    expect(jsonAnswerType('text/event-stream')).toBeNull();
    expect(jsonAnswerType('multipart/mixed')).toBeNull();
    expect(jsonAnswerType('application/json; charset=latin1')).toBeNull();
    expect(jsonAnswerType('application/graphql-response+json, application/json;q=0.9')).toBe('application/graphql-response+json');
  });
});

describe('known operations with the cache on', () => {
  let stack: Stack;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = loggingInto(lines);
    stack = await startStack({ env: { CACHE: 'on', LOG_LEVEL: 'info' }, gateway: { logger } });
  });
  afterAll(() => stack?.close());

  const get = (headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${stack.endpoint}?query=${encodeURIComponent(FIXED_DASHBOARD)}`, { headers: { authorization: `Bearer ${KEY_1}`, ...headers } });
  /** A write with the key: its cached reads and stored answers are dropped (the dashboard's data stays the same). */
  const write = async (): Promise<void> => {
    const written = await stack.gql<unknown>(UPDATE_WEBSITE, { id: '1', input: { excludeBots: true } });
    expect(written.errors).toBeUndefined();
  };

  it('stores the answers it gives, and answers a GET with its ETag, or a 304', async () => {
    const first = await get();
    const firstText = await first.text();
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\//);
    await write();
    reachedYoga.count = 0;
    const second = await get();
    // After the write, the stored answer is dropped: the same data as the first, from the known path.
    expect(JSON.parse(await second.text()).data).toEqual(JSON.parse(firstText).data);
    expect(second.headers.get('etag')).toBe(etag);
    expect(second.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    expect(reachedYoga.count).toBe(0);
    // What it gave was stored: the next is sent stored (the store is written just after the answer).
    let stored = false;
    for (let attempt = 0; attempt < 50 && !stored; attempt++) {
      const logged = lines.length;
      await (await get()).text();
      for (let waited = 0; lines.length === logged && waited < 1_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      stored = lines.slice(logged).some((line) => line.storedAnswer === true);
    }
    expect(stored).toBe(true);
    await write();
    reachedYoga.count = 0;
    const notModified = await get({ 'if-none-match': etag ?? '' });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect(reachedYoga.count).toBe(0);
  });
});

describe('a known operation whose document was parsed again', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No parsed document kept, and room for about one compiled operation: each run parses anew, and
    // another operation's compilation pushes the first one's out.
    stack = await startStack({ env: { DOCUMENT_CACHE_MAX_BYTES: '0', COMPILED_CACHE_MAX_BYTES: '40000' } });
  });
  afterAll(() => stack?.close());

  it('is learned again as its new plan, and answered without yoga after that', async () => {
    const site = { query: '{ website(id: "1") { id domain } }' };
    const sites = { query: '{ websites { totalCount } }' };
    await send(stack, site);
    await send(stack, sites);
    reachedYoga.count = 0;
    // Its compiled form was pushed out: yoga runs it, and the path learns its new plan.
    const again = await send(stack, site);
    expect(JSON.parse(again.body).data.website.domain).toBeTruthy();
    expect(reachedYoga.count).toBe(1);
    await send(stack, site);
    expect(reachedYoga.count).toBe(1);
  });
});
