// X-Gateway-Trace over real HTTP, a gateway in front of the sandbox: the trace names the REST calls the
// sandbox saw and the fields that asked for them, says what the cache did (a repeat is all hits, a call
// joined while in flight is "coalesced" and nothing more), never carries the key, and never reaches
// another request (no stored answer, no HTTP cache, no trace without the header); production hears the
// header only with TRACE=allow.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXAMPLE_QUERY } from '../../../src/graphql/plugins/use-graphiql-page.js';
import { tracesAllowed } from '../../../src/graphql/plugins/use-request-trace.js';
import { type GatewayTrace, TRACE_SHAPE } from '../../../src/upstream/request-trace.js';
import {
  CREATE_WEBSITE,
  KEY_1,
  type GraphQLResponse,
  type Stack,
  dataOf,
  postGraphQL,
  restCalls,
  startStack,
  useStack,
} from '../../fixture.js';

const TRACED = { 'x-gateway-trace': '1' };

/** POSTs `query` with KEY_1 and `headers`. */
const ask = (stack: Stack, query: string, headers: Record<string, string> = TRACED): Promise<GraphQLResponse<unknown>> =>
  postGraphQL(stack.endpoint, { query }, { authorization: `Bearer ${KEY_1}`, ...headers });

/** The trace of an answer, checked against its published shape. */
function traceOf(response: GraphQLResponse<unknown>): GatewayTrace {
  expect(response.extensions?.trace, 'extensions.trace').toBeDefined();
  return TRACE_SHAPE.parse(response.extensions?.trace);
}

/** What the sandbox's log says of a call, as a trace names it: "METHOD /api/v1/path?sorted=query". */
const sorted = (call: { method: string; path: string }): string => {
  const url = new URL(call.path, 'http://x');
  url.searchParams.sort();
  return `${call.method} ${url.pathname}${url.search}`;
};

describe('X-Gateway-Trace, read cache on', () => {
  const stack = useStack({ env: { CACHE: 'on' } });

  it("lists the dashboard's calls as the install saw them, with their fields, then all hits on a repeat", async () => {
    const first = await ask(stack, EXAMPLE_QUERY);
    dataOf(first);
    const trace = traceOf(first);
    const seen = restCalls(stack.sandbox);
    const sent = trace.calls.filter((call) => call.status !== null);
    // Every call of the request, and no other: each as sent, each answered.
    expect(sent.map(sorted).sort()).toEqual([...seen].sort());
    expect(trace.totals.upstreamCalls).toBe(first.extensions?.upstreamCalls);
    expect(sent.every((call) => call.status === 200 && (call.bytes ?? 0) > 0 && call.retries === 0)).toBe(true);
    expect(sent.every((call) => call.cache === 'written' || call.cache === 'miss')).toBe(true);
    // In the order they started, each within the request's time.
    const starts = trace.calls.map((call) => call.startMs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    for (const call of trace.calls) expect(call.startMs + call.durationMs).toBeLessThanOrEqual(trace.totals.wallMs + 0.2);
    // The fields that asked: the statistics' aliases, the series's pages, the website itself.
    const fieldsOf = (path: string): string[] => trace.calls.filter((call) => call.path.startsWith(path)).flatMap((call) => call.fields);
    expect(fieldsOf('/api/v1/websites/1')).toContain('website');
    const statFields = fieldsOf('/api/v1/stats/1');
    for (const field of ['website.visitors', 'website.pages', 'website.countries', 'website.browsers', 'website.referrers'])
      expect(statFields).toContain(field);
    expect(JSON.stringify(trace)).not.toContain(KEY_1);
    expect(first.headers.get('cache-control')).toBe('no-store');

    stack.sandbox.log.reset();
    const again = traceOf(await ask(stack, EXAMPLE_QUERY));
    expect(restCalls(stack.sandbox)).toEqual([]);
    expect(again.totals.upstreamCalls).toBe(0);
    expect(again.calls.map((call) => call.cache)).toEqual(again.calls.map(() => 'hit'));
    expect(again.totals.cacheHits).toBe(again.calls.length);
    // A hit names the call it spared, and what asked for it.
    expect(again.calls.map(sorted).sort()).toEqual(sent.map(sorted).sort());
    expect(again.calls.every((call) => call.status === null && call.bytes === null)).toBe(true);
    expect(again.calls.flatMap((call) => call.fields)).toContain('website.pages');
  });

  it('gives no trace without the header, nor for another value', async () => {
    const plain = await ask(stack, '{ website(id: "2") { domain } }', {});
    expect(plain.extensions?.trace).toBeUndefined();
    expect(plain.extensions?.upstreamCalls).toBe(1);
    const zero = await ask(stack, '{ website(id: "2") { domain } }', { 'x-gateway-trace': '0' });
    expect(zero.extensions?.trace).toBeUndefined();
  });

  it('never stores a traced answer for the next caller; a stored answer says it was stored', async () => {
    const query = '{ websites(perPage: 25) { totalCount } }';
    const traced = traceOf(await ask(stack, query));
    expect(traced.storedAnswer).toBe(false);
    expect(traced.calls.map((call) => call.cache)).toEqual(['written']);
    // Had the traced answer been stored, this one would carry its trace.
    const plain = await ask(stack, query, {});
    expect(plain.extensions?.trace).toBeUndefined();
    expect(plain.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    // That one is stored: the next traced request is answered with it, before GraphQL.
    stack.sandbox.log.reset();
    const stored = await ask(stack, query);
    const storedTrace = traceOf(stored);
    expect(storedTrace.storedAnswer).toBe(true);
    expect(storedTrace.calls).toEqual([]);
    expect(stored.headers.get('cache-control')).toBe('no-store');
    expect(restCalls(stack.sandbox)).toEqual([]);
    const plainAgain = await ask(stack, query, {});
    expect(plainAgain.extensions?.trace).toBeUndefined();
  });

  it('records a write with the field that made it, outside the cache', async () => {
    const response = await postGraphQL(
      stack.endpoint,
      { query: CREATE_WEBSITE, variables: { input: { domain: 'traced.example' } } },
      { authorization: `Bearer ${KEY_1}`, ...TRACED },
    );
    dataOf(response);
    const trace = traceOf(response);
    const write = trace.calls.find((call) => call.method === 'POST');
    expect(write).toMatchObject({ path: '/api/v1/websites', status: 201, cache: null, fields: ['createWebsite'] });
  });

  it('puts the trace in the last part of an incremental answer, with every call of the request', async () => {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${KEY_1}`, ...TRACED },
      body: JSON.stringify({
        query: '{ website(id: "2") { id ... @defer { referrers: stats(name: REFERRER, period: LAST_7_DAYS) { totalCount } } } }',
      }),
    });
    const parts = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data:') && line.length > 6)
      .map((line) => JSON.parse(line.slice(5)) as { hasNext?: boolean; extensions?: Record<string, unknown> });
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.slice(0, -1).map((part) => part.extensions?.trace)).toEqual(parts.slice(0, -1).map(() => undefined));
    const last = parts.at(-1);
    expect(last?.hasNext).toBe(false);
    const trace = TRACE_SHAPE.parse(last?.extensions?.trace);
    expect(trace.calls.map((call) => call.fields.join())).toContain('website.referrers');
  });

  it('traces a document refused before it ran: no call', async () => {
    const response = await ask(stack, '{ website(id: "1") { nope } }');
    expect(response.status).toBe(400);
    const trace = traceOf(response);
    expect(trace.calls).toEqual([]);
    expect(trace.totals.upstreamCalls).toBe(0);
  });
});

describe('X-Gateway-Trace, a call joined while in flight', () => {
  const stack = useStack({ env: { CACHE: 'on' }, sandbox: { latencyMs: 1500 } });

  it('says "coalesced" and nothing of the call it joined', async () => {
    const query = '{ website(id: "4") { domain } }';
    const first = ask(stack, query, {});
    // The first request's call is at the install: the second finds it in flight.
    await expect.poll(() => stack.sandbox.log.entries.length, { timeout: 10_000, interval: 5 }).toBe(1);
    const second = traceOf(await ask(stack, query));
    await first;
    expect(second.calls).toEqual([
      expect.objectContaining({ method: 'GET', path: '/api/v1/websites/4', status: null, bytes: null, retries: 0, cache: 'coalesced' }),
    ]);
    expect(second.totals).toMatchObject({ upstreamCalls: 0, cacheHits: 1 });
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/4']);
  });
});

describe('X-Gateway-Trace, the install failing', () => {
  // Entries go out of date at once, and stay able to answer an outage for the default 10 minutes.
  const stack = useStack({ env: { CACHE: 'on', CACHE_TTL_RECENT_S: '0', UPSTREAM_MAX_ATTEMPTS: '2' } });

  it('counts the retries of a call, and says "stale" of one an old entry answered', async () => {
    const query = '{ website(id: "1") { domain } }';
    stack.sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
    const retried = traceOf(await ask(stack, query));
    expect(retried.calls).toEqual([expect.objectContaining({ path: '/api/v1/websites/1', status: 200, retries: 1, cache: 'written' })]);

    stack.sandbox.scriptFaults([
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
    ]);
    const answered = await ask(stack, query);
    expect(answered.extensions?.stale).toBe(true);
    const stale = traceOf(answered);
    expect(stale.calls).toEqual([expect.objectContaining({ path: '/api/v1/websites/1', status: 503, retries: 1, cache: 'stale' })]);
    expect(stale.totals).toMatchObject({ upstreamCalls: 1, cacheHits: 0 });
  });
});

describe('where X-Gateway-Trace is heard', () => {
  it.each([
    [{ trace: 'auto', introspection: true, production: false }, true],
    [{ trace: 'auto', introspection: false, production: false }, false],
    [{ trace: 'auto', introspection: true, production: true }, false],
    [{ trace: 'allow', introspection: false, production: true }, true],
    [{ trace: 'deny', introspection: true, production: false }, false],
  ] as const)('%o: %s', (config, allowed) => {
    expect(tracesAllowed(config)).toBe(allowed);
  });

  let production: Stack;
  let allowed: Stack;
  beforeAll(async () => {
    [production, allowed] = await Promise.all([
      startStack({ env: { NODE_ENV: 'production' } }),
      startStack({ env: { NODE_ENV: 'production', TRACE: 'allow' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([production?.close(), allowed?.close()]);
  });

  it('is ignored in production, heard there with TRACE=allow', async () => {
    const query = '{ website(id: "1") { domain } }';
    expect((await ask(production, query)).extensions?.trace).toBeUndefined();
    const trace = traceOf(await ask(allowed, query));
    expect(trace.calls.map(sorted)).toEqual(['GET /api/v1/websites/1']);
  });
});

describe('the published shape', () => {
  it('is docs/trace.schema.json', async () => {
    const published = JSON.parse(await readFile(new URL('../../../docs/trace.schema.json', import.meta.url), 'utf8')) as unknown;
    expect(published).toEqual(z.toJSONSchema(TRACE_SHAPE));
  });
});
