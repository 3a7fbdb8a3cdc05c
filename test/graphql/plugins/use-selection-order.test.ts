// Every object of an answer lists its keys in selection order (the spec's ordered maps), over HTTP,
// whichever executor ran: the standard one (GRAPHQL_JIT_ON_RUN=0, and the first run at the default
// 2), the compiled one (=1, and later runs at 2), answers read from the cache, and each part of a
// @defer/@stream answer in the order of its own selection. The documents mix fields answered at once
// (id, domain) with fields that wait for upstream reads, at two levels, and the upstream answers in a
// random order (jitter), so a field's place cannot depend on which read came back first.
import { Kind, parse, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlBlocks } from '../../docs.js';
import { KEY_1, dataOf, postGraphQL, present, startStack, type Stack } from '../../fixture.js';

const RANGE = 'from: "2026-02-14", to: "2026-03-15"';

/** Top level: two websites read upstream around a list; under `a`: scalars between statistics. */
const MIXED = `{
  a: website(id: "1") {
    s1: stats(name: PAGE, ${RANGE}) { totalCount nodes { value count } }
    domain
    summary(${RANGE}, compare: PREVIOUS_PERIOD) { visitorsChange current { visitors range { from to } } }
    id
    s2: stats(name: COUNTRY, ${RANGE}, perPage: 25) { pageInfo { page hasNextPage } nodes { count value } }
    favorite
  }
  websites { totalCount nodes { domain id } }
  b: website(id: "2") { id domain }
}`;

/** The keys of every object of MIXED's answer, by path (`[]`: every item of a list). */
const MIXED_KEYS = {
  '': ['a', 'websites', 'b'],
  a: ['s1', 'domain', 'summary', 'id', 's2', 'favorite'],
  'a.s1': ['totalCount', 'nodes'],
  'a.s1.nodes[]': ['value', 'count'],
  'a.summary': ['visitorsChange', 'current'],
  'a.summary.current': ['visitors', 'range'],
  'a.summary.current.range': ['from', 'to'],
  'a.s2': ['pageInfo', 'nodes'],
  'a.s2.pageInfo': ['page', 'hasNextPage'],
  'a.s2.nodes[]': ['count', 'value'],
  websites: ['totalCount', 'nodes'],
  'websites.nodes[]': ['domain', 'id'],
  b: ['id', 'domain'],
};

/**
 * Fragments, an inline fragment, @skip/@include from variables and a field selected twice: graphql
 * collects a fragment's fields where it is spread first, drops what @skip/@include leave out, and
 * keeps a field selected again at its first place.
 */
const COLLECTED = `query Collected($skip: Boolean!, $with: Boolean!) {
  a: website(id: "1") {
    ...Totals
    domain @skip(if: $skip)
    s1: stats(name: PAGE, ${RANGE}) { totalCount }
    ... on Website { id domain }
    ... @include(if: $with) { favorite }
    ...Totals
  }
}
fragment Totals on Website { summary(${RANGE}) { current { visitors } } s1: stats(name: PAGE, ${RANGE}) { nodes { value } } }`;

type Json = Record<string, unknown>;

/** The key order of every object of `value` by path; a list's items must all have the same. */
function keyOrders(value: unknown, path = '', into: Record<string, string[]> = {}): Record<string, string[]> {
  if (Array.isArray(value)) {
    for (const item of value) keyOrders(item, `${path}[]`, into);
    return into;
  }
  if (typeof value !== 'object' || value === null) return into;
  const keys = Object.keys(value);
  const known = into[path];
  if (known !== undefined) expect(keys, `every item at ${path}`).toEqual(known);
  into[path] = keys;
  for (const key of keys) keyOrders((value as Json)[key], path === '' ? key : `${path}.${key}`, into);
  return into;
}

/** One part of an incremental answer (the 2022-08-24 format yoga speaks). */
interface Part {
  data?: Json | null;
  errors?: unknown[];
  incremental?: { data?: Json; items?: unknown[]; path: (string | number)[] }[];
  hasNext?: boolean;
}

/** POSTs `query` asking for multipart/mixed; answers its JSON parts. */
async function incremental(stack: Stack, query: string): Promise<Part[]> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_1}`, 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query }),
  });
  const contentType = response.headers.get('content-type') ?? '';
  const body = await response.text();
  if (!contentType.startsWith('multipart/mixed')) return [JSON.parse(body) as Part];
  const boundary = present(/boundary="?([^";]+)"?/.exec(contentType)?.[1], 'the boundary');
  return `\r\n${body}`
    .split(`\r\n--${boundary}`)
    .slice(1)
    .filter((segment) => !segment.startsWith('--'))
    .map((segment) => JSON.parse(segment.slice(segment.indexOf('\r\n\r\n') + 4)) as Part);
}

// --- an oracle of selection order, independent of the plugin -----------------------------------------

/**
 * The response keys a selection yields in order (fields by alias or name, fragments in place, a key
 * at its first place), and for each key the selection sets under it. It ignores type conditions and
 * @skip/@include: the documents it checks have neither.
 */
function collect(sets: readonly SelectionSetNode[], fragments: Map<string, FragmentDefinitionNode>): Map<string, SelectionSetNode[]> {
  const keys = new Map<string, SelectionSetNode[]>();
  const walk = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value;
        const under = keys.get(key) ?? [];
        if (selection.selectionSet) under.push(selection.selectionSet);
        keys.set(key, under);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  sets.forEach(walk);
  return keys;
}

/** Paths (`a.s1.nodes[]`) of the objects of `value` whose keys are not in the order `sets` select them. */
function outOfOrder(
  value: unknown,
  sets: readonly SelectionSetNode[],
  fragments: Map<string, FragmentDefinitionNode>,
  path = '',
): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => outOfOrder(item, sets, fragments, `${path}[]`));
  if (typeof value !== 'object' || value === null) return [];
  const selected = collect(sets, fragments);
  const order = [...selected.keys()];
  const positions = Object.keys(value).map((key) => order.indexOf(key));
  const wrong = positions.some((position, i) => position < 0 || (i > 0 && position <= (positions[i - 1] ?? -1))) ? [path || '(root)'] : [];
  const below = Object.entries(value as Json).flatMap(([key, child]) =>
    outOfOrder(child, selected.get(key) ?? [], fragments, path === '' ? key : `${path}.${key}`),
  );
  return [...new Set([...wrong, ...below])];
}

/** The selection sets at `path` of an operation (list indexes skipped). */
function setsAt(
  root: SelectionSetNode,
  path: readonly (string | number)[],
  fragments: Map<string, FragmentDefinitionNode>,
): SelectionSetNode[] {
  let sets: SelectionSetNode[] = [root];
  for (const key of path) if (typeof key === 'string') sets = collect(sets, fragments).get(key) ?? [];
  return sets;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  return new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
}

/** Where each part of an incremental answer is out of selection order: its initial data, its increments. */
function partsOutOfOrder(parts: Part[], operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): string[] {
  return parts.flatMap((part, index) => [
    ...outOfOrder(part.data ?? null, [operation.selectionSet], fragments).map((path) => `part ${index}: ${path}`),
    ...(part.incremental ?? []).flatMap((entry) => {
      const sets =
        entry.items === undefined
          ? setsAt(operation.selectionSet, entry.path, fragments)
          : setsAt(operation.selectionSet, entry.path.slice(0, -1), fragments);
      return outOfOrder(entry.data ?? entry.items ?? null, sets, fragments).map(
        (path) => `part ${index} at ${entry.path.join('.')}: ${path}`,
      );
    }),
  ]);
}

// --- the tests ----------------------------------------------------------------------------------------

describe.each([
  { jit: '0', executors: 'the standard executor on every run' },
  { jit: '2', executors: 'the standard executor, then the compiled one' },
  { jit: '1', executors: 'the compiled executor on every run' },
])('GRAPHQL_JIT_ON_RUN=$jit ($executors)', ({ jit }) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { GRAPHQL_JIT_ON_RUN: jit } });
    // Upstream answers come back in a random order.
    stack.sandbox.setKnobs({ latencyMs: 2, jitterMs: 15 });
  });
  afterAll(() => stack.close());

  it('answers a document mixing immediate fields and upstream reads, at two levels, in selection order on every run', async () => {
    for (let run = 1; run <= 4; run++) {
      const data = dataOf(await stack.gql<Json>(MIXED));
      expect(keyOrders(data), `run ${run}`).toEqual(MIXED_KEYS);
    }
  });

  it('orders what an interface field answers (Node: its one object type, Website)', async () => {
    const query = `{ node(id: "1") { ... on Website { visitors: stats(name: VISITOR, period: LAST_7_DAYS) { totalCount } domain } id } }`;
    for (let run = 1; run <= 3; run++) {
      const data = dataOf(await stack.gql<Json>(query));
      expect(keyOrders(data).node, `run ${run}`).toEqual(['visitors', 'domain', 'id']);
    }
  });

  it('collects as graphql does: fragments where first spread, @skip/@include from variables, a field selected twice at its first place', async () => {
    for (let run = 1; run <= 2; run++) {
      const skipped = dataOf(await stack.gql<Json>(COLLECTED, { skip: true, with: true }));
      expect(keyOrders(skipped).a, `run ${run}`).toEqual(['summary', 's1', 'id', 'domain', 'favorite']);
      const kept = dataOf(await stack.gql<Json>(COLLECTED, { skip: false, with: false }));
      expect(keyOrders(kept).a, `run ${run}`).toEqual(['summary', 's1', 'domain', 'id']);
      expect(keyOrders(kept)['a.s1']).toEqual(['nodes', 'totalCount']);
    }
  });

  it('orders each @defer part by its own selection, and the initial part by what is not deferred', async () => {
    const query = `{ a: website(id: "1") {
      s1: stats(name: PAGE, ${RANGE}) { totalCount }
      ... @defer { summary(${RANGE}) { current { visitors pageviews } } domain s2: stats(name: COUNTRY, ${RANGE}) { nodes { count value } } id }
      favorite domain
    } websites { totalCount } }`;
    for (let run = 1; run <= 2; run++) {
      const [initial, ...later] = await incremental(stack, query);
      expect(keyOrders(initial?.data), `run ${run}`).toEqual({
        '': ['a', 'websites'],
        a: ['s1', 'favorite', 'domain'],
        'a.s1': ['totalCount'],
        websites: ['totalCount'],
      });
      const deferred = later.flatMap((part) => part.incremental ?? []);
      expect(deferred).toHaveLength(1);
      expect(deferred[0]?.path).toEqual(['a']);
      expect(keyOrders(deferred[0]?.data)).toEqual({
        '': ['summary', 'domain', 's2', 'id'],
        summary: ['current'],
        'summary.current': ['visitors', 'pageviews'],
        s2: ['nodes'],
        's2.nodes[]': ['count', 'value'],
      });
    }
  });

  it('orders @stream items as the list selects them', async () => {
    const query = `{ websites(perPage: 10, sortBy: DOMAIN, sort: ASC) { nodes @stream(initialCount: 1) {
      s: stats(name: PAGE, ${RANGE}) { totalCount } domain id } totalCount } }`;
    const parts = await incremental(stack, query);
    expect(keyOrders(parts[0]?.data)).toEqual({
      '': ['websites'],
      websites: ['nodes', 'totalCount'],
      'websites.nodes[]': ['s', 'domain', 'id'],
      'websites.nodes[].s': ['totalCount'],
    });
    const items = parts
      .slice(1)
      .flatMap((part) => part.incremental ?? [])
      .flatMap((entry) => entry.items ?? []);
    expect(items.length).toBeGreaterThan(1);
    expect(keyOrders(items)).toEqual({ '[]': ['s', 'domain', 'id'], '[].s': ['totalCount'] });
  });
});

describe('answers read from the cache', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { GRAPHQL_JIT_ON_RUN: '0', CACHE: 'on' } });
  });
  afterAll(() => stack.close());

  it('are in selection order too (every read a cache hit)', async () => {
    dataOf(await stack.gql<Json>(MIXED));
    const cached = await stack.gql<Json>(MIXED);
    expect(cached.extensions?.cache).toMatchObject({ misses: 0 });
    expect(keyOrders(dataOf(cached))).toEqual(MIXED_KEYS);
  });
});

describe("the docs' documents and the mixed one", () => {
  // Queries and mutations: a subscription's answers are the query's (test/live/subscriptions.test.ts).
  const blocks = graphqlBlocks()
    .map((block) => block.text)
    .filter((block) => !/^subscription\b/m.test(block));

  /** Each block's operations run in turn on a fresh stack (a block's Delete must not reach the next one), twice. */
  it.each(['0', '2'])('GRAPHQL_JIT_ON_RUN=%s: no answer has an object out of selection order', async (jit) => {
    const answers: string[] = [];
    const wrong: string[] = [];
    for (const block of [...blocks, MIXED]) {
      const document = parse(block);
      const fragments = fragmentsOf(document);
      const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      const stack = await startStack({ env: { GRAPHQL_JIT_ON_RUN: jit } });
      try {
        for (let run = 1; run <= 2; run++) {
          for (const operation of operations) {
            const name = `${operation.name?.value ?? 'mixed'} (run ${run})`;
            answers.push(name);
            const paths = block.includes('@defer')
              ? partsOutOfOrder(await incremental(stack, block), operation, fragments)
              : outOfOrder(
                  (
                    await postGraphQL<Json>(
                      stack.endpoint,
                      { query: block, operationName: operation.name?.value },
                      { authorization: `Bearer ${KEY_1}` },
                    )
                  ).data ?? null,
                  [operation.selectionSet],
                  fragments,
                );
            if (paths.length > 0) wrong.push(`${name}: ${paths.join(', ')}`);
          }
        }
      } finally {
        await stack.close();
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(16);
    expect(wrong, `${wrong.length} of ${answers.length} answers out of selection order`).toEqual([]);
  });
});
