// graphql-jit (graphql/plugins/use-compiled-execution.ts) must answer exactly as the standard executor:
// the same documents through a gateway that never compiles (GRAPHQL_JIT_ON_RUN=0) and through one that
// compiles at once (=1), each on its own sandbox, compared byte for byte over HTTP. Then, in process,
// when an operation is compiled: at its configured run, per document and operation name, never with
// @defer, once.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useCompiledExecution } from '../../../src/graphql/plugins/use-compiled-execution.js';
import { usePlan } from '../../../src/graphql/plugins/use-plan.js';
import { KEY_1, startStack, type Stack } from '../../fixture.js';
import { tinyYoga } from './yoga.js';

const compilations = vi.hoisted(() => ({ count: 0 }));
vi.mock('graphql-jit', async (importOriginal) => {
  const real = await importOriginal<typeof import('graphql-jit')>();
  return {
    ...real,
    compileQuery: (...args: Parameters<typeof real.compileQuery>) => {
      compilations.count++;
      return real.compileQuery(...args);
    },
  };
});

const RANGE = 'from: "2026-02-14", to: "2026-03-15"';

/** Documents with their variables and operation names: data, errors, refusals, fragments, directives. */
const CASES: { title: string; query: string; variables?: Record<string, unknown>; operationName?: string }[] = [
  {
    title: 'a dashboard with every Stat and StatList field',
    query: `query Dashboard { website(id: "1") { id domain privacy passwordProtected emailReports excludeBots excludeParams excludeIps favorite
      visitors: stats(name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC, perPage: 50) { nodes { value count label date share } sum range { from to } }
      countries: stats(name: COUNTRY, ${RANGE}) { nodes { value count label code } totalCount pageInfo { hasNextPage hasPreviousPage lastPage page perPage } }
      events: stats(name: EVENT, ${RANGE}) { nodes { value label event { name value unit } } } } }`,
  },
  {
    title: 'fragments, aliases, __typename and @skip/@include from variables',
    query: `query List($all: Boolean!, $none: Boolean!) { websites(perPage: 25, sortBy: DOMAIN, sort: ASC) { __typename totalCount
      nodes { ...Site ... on Website @include(if: $all) { privacy } other: domain @skip(if: $none) } } }
      fragment Site on Website { id domain createdAt }`,
    variables: { all: true, none: true },
  },
  {
    title: 'a period, a series and a summary',
    query: `{ website(id: "1") { series(metric: VISITORS, period: LAST_30_DAYS, interval: WEEK) { interval metric points { date count } range { from to } }
      summary(period: LAST_7_DAYS, compare: PREVIOUS_PERIOD) { current { visitors pageviews range { from to } } previous { visitors } visitorsChange pageviewsChange } } }`,
  },
  { title: 'a website that does not exist (NOT_FOUND, data null)', query: '{ website(id: "999999") { id domain } }' },
  {
    title: 'errors in a list, inside a fragment, nulling what is non-null up to the nearest nullable',
    query: `query { ...Sites } fragment Sites on Query { websites(perPage: 10, sortBy: DOMAIN, sort: ASC) { nodes { id
      ... on Website { stats(name: PAGE, from: "2026-02-30", to: "2026-03-15") { totalCount } } } } missing: website(id: "999999") { id } }`,
  },
  {
    title: 'an argument the gateway refuses',
    query: `{ website(id: "1") { stats(name: PAGE, from: "2026-02-30", to: "2026-03-15") { totalCount } } }`,
  },
  {
    title: 'a variable our Date scalar refuses (nothing runs)',
    query: 'query Bad($from: Date!) { website(id: "1") { stats(name: PAGE, from: $from, to: "2026-03-15") { totalCount } } }',
    variables: { from: '15/03/2026' },
  },
  { title: 'a missing required variable', query: 'query Bad($id: ID!) { website(id: $id) { id } }', variables: {} },
  {
    title: 'the first of two operations, by name',
    query: 'query One { websites { totalCount } } query Two { website(id: "1") { domain } }',
    operationName: 'One',
  },
  {
    title: 'the second of two operations, by name',
    query: 'query One { websites { totalCount } } query Two { website(id: "1") { domain } }',
    operationName: 'Two',
  },
  {
    title: 'introspection',
    query: '{ __schema { queryType { name } } __type(name: "Stat") { name fields { name type { kind name ofType { name } } } } }',
  },
  {
    title: 'a mutation refused field by field (user errors, nothing written)',
    query:
      'mutation { createWebsite(input: { domain: "not a domain", privacy: PASSWORD }) { website { id } userErrors { field message code } } }',
  },
  {
    title: 'create then read back in the payload, then delete',
    query: `mutation Create { createWebsite(input: { domain: "compiled.example" }) { website { domain privacy } userErrors { code } query { websites(search: "compiled") { totalCount } } } }
      mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId userErrors { code } } }`,
    operationName: 'Create',
  },
];

/** Status and parsed body (graphql-jit keeps the requested field order, the standard executor not always). */
async function post(stack: Stack, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${KEY_1}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('compiled and standard execution over HTTP', () => {
  let standard: Stack;
  let compiled: Stack;
  beforeAll(async () => {
    [standard, compiled] = await Promise.all([
      startStack({ env: { GRAPHQL_JIT_ON_RUN: '0' } }),
      startStack({ env: { GRAPHQL_JIT_ON_RUN: '1' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([standard?.close(), compiled?.close()]);
  });

  it.each(CASES)('answer the same: $title', async ({ query, variables, operationName }) => {
    const body = { query, variables, operationName };
    const expected = await post(standard, body);
    const first = await post(compiled, body);
    expect(first).toEqual(expected);
    // Mutations change the sandbox: run them once on each side.
    if (!query.trimStart().startsWith('mutation')) expect(await post(compiled, body)).toEqual(expected);
  });

  it('runs each operation of a document as itself, whichever ran first (compiled per operation name)', async () => {
    const query =
      'query Sites { websites { totalCount } } query Site($id: ID!) { website(id: $id) { domain } } mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId } }';
    const created = await post(compiled, { query: 'mutation { createWebsite(input: { domain: "twice.example" }) { website { id } } }' });
    const id = (created.body as { data: { createWebsite: { website: { id: string } } } }).data.createWebsite.website.id;
    const sites = (await post(compiled, { query, operationName: 'Sites' })).body as { data: { websites: { totalCount: number } } };
    const site = (await post(compiled, { query, operationName: 'Site', variables: { id } })).body as { data: unknown };
    expect(site.data).toEqual({ website: { domain: 'twice.example' } });
    const again = (await post(compiled, { query, operationName: 'Sites' })).body as { data: unknown };
    expect(again.data).toEqual(sites.data);
    const deleted = (await post(compiled, { query, operationName: 'Delete', variables: { id } })).body as { data: unknown };
    expect(deleted.data).toEqual({ deleteWebsite: { deletedId: id } });
  });
});

describe('when an operation is compiled', () => {
  /** The plan step, then the compiled execution reading it. */
  const compiledAt = (onRun: number): Plugin[] => {
    const plan = usePlan();
    return [plan as Plugin, useCompiledExecution(plan, { onRun }) as Plugin];
  };
  async function ask(yoga: ReturnType<typeof tinyYoga>, body: Record<string, unknown>, accept = 'application/graphql-response+json') {
    const response = await yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
    });
    return response.text();
  }

  it('at its configured run, once, and separately for each operation of a document', async () => {
    const yoga = tinyYoga(compiledAt(2));
    const query = 'query A { hello(name: "a") } query B { hello(name: "b") }';
    const before = compilations.count;
    expect(await ask(yoga, { query, operationName: 'A' })).toBe('{"data":{"hello":"hello a"}}');
    expect(compilations.count).toBe(before); // first run: the standard executor
    expect(await ask(yoga, { query, operationName: 'A' })).toBe('{"data":{"hello":"hello a"}}');
    expect(compilations.count).toBe(before + 1);
    expect(await ask(yoga, { query, operationName: 'B' })).toBe('{"data":{"hello":"hello b"}}');
    expect(await ask(yoga, { query, operationName: 'A' })).toBe('{"data":{"hello":"hello a"}}');
    expect(compilations.count).toBe(before + 1); // A kept; B not yet at its second run
    expect(await ask(yoga, { query, operationName: 'B' })).toBe('{"data":{"hello":"hello b"}}');
    expect(compilations.count).toBe(before + 2);
  });

  it('never for an operation name the document does not hold: the standard executor answers it', async () => {
    const yoga = tinyYoga(compiledAt(1));
    const standard = tinyYoga([]);
    const before = compilations.count;
    for (const operationName of ['Missing', 'Other', 'Missing']) {
      const body = { query: 'query A { hello }', operationName };
      const answer = await ask(yoga, body);
      expect(answer).toContain('"errors"');
      expect(answer).toBe(await ask(standard, body));
    }
    expect(compilations.count).toBe(before);
  });

  it('never with GRAPHQL_JIT_ON_RUN=0, and never a document with @defer', async () => {
    const never = tinyYoga(compiledAt(0));
    const deferring = tinyYoga([useDeferStream() as Plugin, ...compiledAt(1)]);
    const before = compilations.count;
    for (let run = 0; run < 3; run++) {
      expect(await ask(never, { query: '{ hello }' })).toBe('{"data":{"hello":"hello you"}}');
      const parts = await ask(deferring, { query: '{ hello ... @defer { other: hello(name: "later") } }' }, 'multipart/mixed');
      expect(parts).toContain('"hello":"hello you"');
      expect(parts).toContain('"other":"hello later"');
    }
    expect(compilations.count).toBe(before);
  });
});
