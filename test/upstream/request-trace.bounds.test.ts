// A trace has a size. A request within every limit (a body under MAX_BODY_BYTES, cost under MAX_COST)
// can make response paths as long as its body (a 60 KB alias) and have one read needed by dozens of
// them (nodes(ids:) naming one website 48 times, each its statistic): each call names at most its first fields, and the
// calls with their fields stay within the trace's bytes, the rest counted and the trace marked `cut`.
// Over real HTTP: the traced answer is at most a small multiple of the same answer untraced.
import { describe, expect, it } from 'vitest';
import { TRACE_FIELDS_PER_CALL, TRACE_MAX_BYTES, TRACE_SHAPE } from '../../src/upstream/request-trace.js';
import { KEY_1, type Stack, useStack } from '../fixture.js';

/** The text of an answer to `query` with KEY_1, with or without the trace header. */
async function answer(stack: Stack, query: string, traced: boolean): Promise<string> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}`, ...(traced ? { 'x-gateway-trace': '1' } : {}) },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return response.text();
}

const ids = (count: number): string => `[${Array.from({ length: count }, () => '"1"').join(',')}]`;

describe('the trace of a request whose reads many fields need', () => {
  const stack = useStack({ env: { CACHE: 'off' } });

  it('stays within its bytes with a 60 KB alias on 48 paths of one read, and says what it left out', async () => {
    const alias = `a${'x'.repeat(60_000)}`;
    const query = `{ ${alias}: nodes(ids: ${ids(48)}) { id ... on Website { pages: stats(name: PAGE, period: LAST_30_DAYS) { totalCount } } } }`;
    const untraced = await answer(stack, query, false);
    const traced = await answer(stack, query, true);
    const body = JSON.parse(traced) as { data: unknown; errors?: unknown; extensions: { trace: unknown } };
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual((JSON.parse(untraced) as { data: unknown }).data);
    const sizes = `traced ${Buffer.byteLength(traced)} bytes, untraced ${Buffer.byteLength(untraced)}`;
    expect(Buffer.byteLength(traced), sizes).toBeLessThanOrEqual(2 * Buffer.byteLength(untraced));
    const trace = TRACE_SHAPE.parse(body.extensions.trace);
    expect(Buffer.byteLength(JSON.stringify(trace.calls))).toBeLessThanOrEqual(TRACE_MAX_BYTES);
    // No path fits (each is longer than the trace's bytes): all are counted, none named.
    const calls = trace.calls.map((call) => [call.path.split('?')[0], call.fields, call.moreFields]);
    expect(calls.sort()).toEqual([
      ['/api/v1/stats/1', [], 48],
      ['/api/v1/websites/1', [], 1],
    ]);
    expect(trace.cut).toEqual({ calls: 0, fields: 49 });
  });

  it('names at most the first fields of a call needed by many short paths', async () => {
    const query = `{ ${Array.from({ length: 25 }, (_, index) => `a${index}: website(id: "1") { id }`).join(' ')} }`;
    const trace = TRACE_SHAPE.parse(JSON.parse(await answer(stack, query, true)).extensions.trace);
    expect(trace.calls).toHaveLength(1);
    expect(trace.calls[0]?.fields).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9']);
    expect(trace.calls[0]?.fields).toHaveLength(TRACE_FIELDS_PER_CALL);
    expect(trace.calls[0]?.moreFields).toBe(25 - TRACE_FIELDS_PER_CALL);
    expect(trace.cut).toEqual({ calls: 0, fields: 25 - TRACE_FIELDS_PER_CALL });
  });

  it('is not marked cut when nothing was left out', async () => {
    const trace = TRACE_SHAPE.parse(JSON.parse(await answer(stack, '{ website(id: "1") { domain } }', true)).extensions.trace);
    expect(trace.calls.map((call) => call.fields)).toEqual([['website']]);
    expect(trace.cut).toBeUndefined();
    expect(trace.calls[0]).not.toHaveProperty('moreFields');
  });
});

describe('the trace of a request with more calls than its bytes hold', () => {
  // Limits raised so that one request can make 200 calls: more than a trace's bytes can name.
  const stack = useStack({ env: { CACHE: 'off', MAX_COST: '1000', MAX_ALIASES: '300', MAX_TOKENS: '10000' } });

  it('names the first calls that fit, counts the others in cut, and its totals count every call', async () => {
    const aliases = Array.from(
      { length: 200 },
      (_, index) => `s${index}: stats(name: PAGE, period: LAST_30_DAYS, search: "q${index}") { totalCount }`,
    );
    const response = JSON.parse(await answer(stack, `{ website(id: "1") { ${aliases.join(' ')} } }`, true)) as {
      errors?: unknown;
      extensions: { trace: unknown };
    };
    expect(response.errors).toBeUndefined();
    const trace = TRACE_SHAPE.parse(response.extensions.trace);
    expect(trace.totals.upstreamCalls).toBe(201);
    expect(Buffer.byteLength(JSON.stringify(trace.calls))).toBeLessThanOrEqual(TRACE_MAX_BYTES);
    expect(trace.calls.length).toBeGreaterThan(50);
    // Calls first: the fields of the last named ones may find no room left, and are counted.
    const fieldsLeftOut = trace.calls.reduce((sum, call) => sum + (call.moreFields ?? 0), 0);
    expect(trace.cut).toEqual({ calls: 201 - trace.calls.length, fields: fieldsLeftOut });
    expect(trace.calls[0]?.fields.length).toBe(1);
    // The ones named are the first to start.
    const starts = trace.calls.map((call) => call.startMs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
  });
});
