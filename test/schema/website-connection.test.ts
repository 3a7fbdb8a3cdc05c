// Query.websitesConnection over real HTTP against the sandbox: what it sends upstream, every website
// once and in order whatever the page size, forwards and backwards, at most 2 upstream calls a page,
// cursors refused with other arguments, and its cost. The arithmetic alone: offset-connection.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CREATE_WEBSITE,
  dataOf,
  firstError,
  restCalls,
  startStack,
  useStack,
  type GraphQLResponse,
  type Stack,
  type WebsitePayloadData,
} from '../fixture.js';

interface ConnectionData {
  websitesConnection: {
    totalCount: number;
    edges: { cursor: string; node: { id: string; domain: string } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };
}
type Connection = ConnectionData['websitesConnection'];

const CONNECTION = `query($first: Int, $after: String, $last: Int, $before: String, $search: String, $sortBy: WebsiteSortField, $sort: SortDirection) {
  websitesConnection(first: $first, after: $after, last: $last, before: $before, search: $search, sortBy: $sortBy, sort: $sort) {
    totalCount edges { cursor node { id domain } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;

/** KEY_1's demo websites, newest first. */
const DEMO_IDS = ['10', '8', '7', '5', '4', '2', '1'];

/** One page, and the upstream calls it took (the sandbox's log, cleared first). */
async function page(stack: Stack, variables: Record<string, unknown>): Promise<{ connection: Connection; calls: number }> {
  stack.sandbox.log.reset();
  const response = await stack.gql<ConnectionData>(CONNECTION, variables);
  return { connection: dataOf(response).websitesConnection, calls: stack.sandbox.log.count };
}

/** Every page forwards from the start, `first` at a time: the ids seen and the calls of each page. */
async function pageForwards(
  stack: Stack,
  first: number,
  variables: Record<string, unknown> = {},
): Promise<{ ids: string[]; calls: number[] }> {
  const ids: string[] = [];
  const calls: number[] = [];
  let after: string | null = null;
  for (;;) {
    const { connection, calls: made } = await page(stack, { ...variables, first, after });
    ids.push(...connection.edges.map((edge) => edge.node.id));
    calls.push(made);
    if (!connection.pageInfo.hasNextPage) return { ids, calls };
    after = connection.pageInfo.endCursor;
  }
}

describe('websitesConnection over the demo websites', () => {
  const stack = useStack();

  it('pages the seven websites three at a time: each once, newest first, one upstream call a page', async () => {
    const { ids, calls } = await pageForwards(stack, 3);
    expect(ids).toEqual(DEMO_IDS);
    expect(calls).toEqual([1, 1, 1]);
  });

  it('reads the pages the websites list reads, with its REST parameters', async () => {
    const first = await page(stack, { first: 3 });
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites?page=1&per_page=10&sort=desc&sort_by=id']);
    expect(first.connection.totalCount).toBe(7);
    expect(first.connection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    await page(stack, { first: 5, search: 'shop', sortBy: 'DOMAIN', sort: 'ASC' });
    expect(restCalls(stack.sandbox)).toEqual([
      'GET /api/v1/websites?page=1&per_page=10&search=shop&search_by=domain&sort=asc&sort_by=domain',
    ]);
  });

  it('pages backwards with last and before: each once, in order; last without before reads the length first', async () => {
    const ids: string[] = [];
    let before: string | null = null;
    for (;;) {
      const { connection, calls } = await page(stack, { last: 3, before });
      // A list of 7 is whole in the first page of 100, which says how long it is.
      expect(calls).toBe(1);
      ids.unshift(...connection.edges.map((edge) => edge.node.id));
      if (!connection.pageInfo.hasPreviousPage) break;
      before = connection.pageInfo.startCursor;
    }
    expect(ids).toEqual(DEMO_IDS);
  });

  it('a page between two cursors, and a page past the end', async () => {
    const all = (await page(stack, { first: 7 })).connection.edges;
    const between = (await page(stack, { first: 10, after: all[1]?.cursor, before: all[5]?.cursor })).connection;
    expect(between.edges.map((edge) => edge.node.id)).toEqual(['7', '5', '4']);
    expect(between.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const past = (await page(stack, { first: 3, after: all[6]?.cursor })).connection;
    expect(past).toEqual({
      totalCount: 7,
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    });
  });

  it('the same filters however they are spelled keep their cursors: defaults written out, an empty search', async () => {
    const { connection } = await page(stack, { first: 2 });
    const next = await page(stack, { first: 2, after: connection.pageInfo.endCursor, search: '', sortBy: 'CREATED_AT', sort: 'DESC' });
    expect(next.connection.edges.map((edge) => edge.node.id)).toEqual(['7', '5']);
  });

  it.each([
    ['with another sort', { sort: 'ASC' }],
    ['with another sortBy', { sortBy: 'DOMAIN' }],
    ['with a search', { search: 'acme' }],
  ])('a cursor used %s: BAD_USER_INPUT naming the argument, no upstream call', async (_what, other) => {
    const cursor = (await page(stack, { first: 2 })).connection.pageInfo.endCursor;
    stack.sandbox.log.reset();
    for (const [argument, args] of [
      ['after', { first: 2, after: cursor }],
      ['before', { last: 2, before: cursor }],
    ] as const) {
      const response = await stack.gql<ConnectionData>(CONNECTION, { ...args, ...other });
      expect(response.data, argument).toBeUndefined();
      const error = firstError(response);
      expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument, field: 'websitesConnection' });
      expect(error.message).toBe(
        `websitesConnection: ${argument} is a cursor of this list with other search, favorite, sortBy or sort arguments, or of another list: a cursor only holds with the arguments it was made with. Start again without it.`,
      );
    }
    expect(stack.sandbox.log.count).toBe(0);
  });

  it.each([
    ['no first or last', {}, 'first', 'Give first or last (1 to 100): how many items the page holds.'],
    ['both', { first: 2, last: 2 }, 'last', 'Give first or last, not both: got first 2 and last 2.'],
    ['first 0', { first: 0 }, 'first', 'first must be an integer from 1 to 100, got 0.'],
    ['last 101', { last: 101 }, 'last', 'last must be an integer from 1 to 100, got 101.'],
    [
      'a cursor of nothing',
      { first: 2, after: 'bm90IGEgY3Vyc29y' },
      'after',
      'after must be a cursor this list answered, got "bm90IGEgY3Vyc29y".',
    ],
    ['a search too long', { first: 2, search: 'x'.repeat(256) }, 'search', 'search must be at most 255 characters, got 256.'],
  ])('%s: BAD_USER_INPUT, no upstream call', async (_what, variables, argument, message) => {
    const response = await stack.gql<ConnectionData>(CONNECTION, variables);
    expect(response.data).toBeUndefined();
    expect(response.errors).toHaveLength(1);
    expect(firstError(response)).toMatchObject({
      message: `websitesConnection: ${message}`,
      extensions: { code: 'BAD_USER_INPUT', argument },
    });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('refuses every refused argument at once: a search too long and a cursor of nothing', async () => {
    const response = await stack.gql<ConnectionData>(CONNECTION, { first: 2, after: 'bm90IGEgY3Vyc29y', search: 'x'.repeat(256) });
    expect(response.errors?.map((error) => error.extensions?.argument)).toEqual(['search', 'after']);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('declares its cost: 2 calls a page (3 for last without before), times the page size for what is under the edges', async () => {
    const costOf = async (args: string): Promise<unknown> => {
      const stat = 'stats(name: PAGE, from: "2026-03-01", to: "2026-03-15") { totalCount }';
      const response: GraphQLResponse<unknown> = await stack.gql(`{ websitesConnection(${args}) { edges { node { ${stat} } } } }`);
      return response.extensions?.cost;
    };
    expect(await costOf('first: 25')).toMatchObject({ requested: 27 });
    expect(await costOf('last: 5')).toMatchObject({ requested: 8 });
  });
});

describe('websitesConnection over 137 websites (the demo seven and 130 created)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
    for (let i = 1; i <= 130; i++) {
      const created = dataOf(
        await stack.gql<{ createWebsite: WebsitePayloadData }>(CREATE_WEBSITE, { input: { domain: `site-${i}.example` } }),
      );
      expect(created.createWebsite.userErrors).toEqual([]);
    }
  }, 60_000);
  afterAll(() => stack.close());

  const allIds = async (): Promise<string[]> => {
    const ids: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const response = await stack.gql<{ websites: { nodes: { id: string }[] } }>(
        `{ websites(perPage: 100, page: ${offset / 100 + 1}) { nodes { id } } }`,
      );
      const { nodes } = dataOf(response).websites;
      ids.push(...nodes.map((node) => node.id));
      if (nodes.length < 100) return ids;
    }
  };

  it.each([7, 12, 25, 100])(
    'pages all of them %i at a time: each once, in order, never more than 2 upstream calls a page',
    async (first) => {
      const expected = await allIds();
      expect(expected).toHaveLength(137);
      const { ids, calls } = await pageForwards(stack, first);
      expect(ids).toEqual(expected);
      expect(Math.max(...calls)).toBeLessThanOrEqual(2);
    },
  );

  it("upstream calls per page for first of 7, 12, 25 and 100 from offsets 0 to 130 (the issue's measure)", async () => {
    const cursors = (await pageForwards(stack, 1)).ids.length; // 137 pages of one: every offset has a cursor
    expect(cursors).toBe(137);
    const cursorAt: string[] = [];
    let after: string | null = null;
    for (let offset = 0; offset < 137; offset += 100) {
      const { connection } = await page(stack, { first: 100, after });
      cursorAt.push(...connection.edges.map((edge) => edge.cursor));
      after = connection.pageInfo.endCursor;
    }
    const offsets = [0, 5, 7, 20, 45, 95, 99, 100, 130];
    const measured: Record<number, number[]> = {};
    for (const first of [7, 12, 25, 100]) {
      measured[first] = [];
      for (const offset of offsets) {
        const { calls } = await page(stack, { first, after: offset === 0 ? null : cursorAt[offset - 1] });
        measured[first].push(calls);
      }
    }
    // Offsets:       0  5  7 20 45 95 99 100 130
    expect(measured).toEqual({
      7: [1, 1, 1, 1, 1, 2, 2, 1, 1],
      12: [1, 1, 1, 1, 1, 2, 2, 1, 1],
      25: [1, 1, 1, 1, 1, 2, 2, 1, 1],
      100: [1, 2, 2, 2, 2, 2, 2, 1, 2],
    });
  });
});
