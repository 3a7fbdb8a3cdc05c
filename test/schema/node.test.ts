// Query.node and Query.nodes over real HTTP against the sandbox: a website by its id as a Node, null
// (and no data, no error) for another user's website or an unknown id, ids checked before any call,
// one id's failure kept to its place in the list, and the declared costs.
import { describe, expect, it } from 'vitest';
import { KEY_2, dataOf, firstError, restCalls, useStack } from '../fixture.js';

interface NodeData {
  __typename: string;
  id: string;
  domain?: string;
}

const stack = useStack();

describe('node(id:)', () => {
  it('reads a website by its id: the same id, one upstream call', async () => {
    const response = await stack.gql<{ node: NodeData | null }>('{ node(id: "8") { __typename id ... on Website { domain } } }');
    expect(dataOf(response).node).toEqual({ __typename: 'Website', id: '8', domain: expect.stringMatching(/\./) });
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/8']);
  });

  it("is null, with no error and no data, for another user's website and for an unknown id", async () => {
    for (const id of ['3', '999999']) {
      const response = await stack.gql<{ node: NodeData | null }>(
        `{ node(id: "${id}") { id ... on Website { domain stats(name: PAGE, period: TODAY) { totalCount } } } }`,
      );
      expect(response.errors, id).toBeUndefined();
      expect(response.data, id).toEqual({ node: null });
    }
    // Website 3 is KEY_2's own: the same query with that key answers it.
    const own = await stack.gql<{ node: NodeData | null }>('{ node(id: "3") { id } }', {}, KEY_2);
    expect(dataOf(own).node).toEqual({ id: '3' });
  });

  it('starts the statistics under it together with the website, as website(id:) does: one round trip', async () => {
    const query = `query($id: ID!) { node(id: $id) { ...Card } }
      fragment Card on Website { domain a: stats(name: PAGE, period: LAST_7_DAYS) { totalCount } b: stats(name: COUNTRY, period: LAST_7_DAYS) { totalCount } }`;
    // Once first: the sandbox makes a website's statistics at its first request, on this process's
    // event loop, which could keep the third request from arriving while the first two are answered.
    await stack.gql<{ node: NodeData | null }>(query, { id: '1' });
    stack.sandbox.log.reset();
    stack.sandbox.setKnobs({ latencyMs: 60 });
    try {
      const response = await stack.gql<{ node: NodeData | null }>(query, { id: '1' });
      expect(response.errors).toBeUndefined();
      expect(stack.sandbox.log.count).toBe(3);
      expect(stack.sandbox.log.maxInFlight).toBe(3);
    } finally {
      stack.sandbox.setKnobs({ latencyMs: 0 });
    }
  });

  it('refuses an id that is no id before any call: BAD_USER_INPUT naming it', async () => {
    const response = await stack.gql<{ node: NodeData | null }>('{ node(id: "V2Vic2l0ZTox") { id } }');
    expect(response.data).toBeUndefined();
    expect(firstError(response)).toMatchObject({
      message: 'node: id must be a positive integer id, got "V2Vic2l0ZTox".',
      extensions: { code: 'BAD_USER_INPUT', argument: 'id', field: 'node' },
    });
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('nodes(ids:)', () => {
  it('answers in the order asked, null for what the caller has no object of, each distinct id read once', async () => {
    const response = await stack.gql<{ nodes: (NodeData | null)[] }>('{ nodes(ids: ["2", "3", "10", "2", "999999"]) { __typename id } }');
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).nodes).toEqual([
      { __typename: 'Website', id: '2' },
      null,
      { __typename: 'Website', id: '10' },
      { __typename: 'Website', id: '2' },
      null,
    ]);
    expect(restCalls(stack.sandbox).sort()).toEqual([
      'GET /api/v1/websites/10',
      'GET /api/v1/websites/2',
      'GET /api/v1/websites/3',
      'GET /api/v1/websites/999999',
    ]);
  });

  it('keeps a failed read to its own place: an error at its index, the other ids answered', async () => {
    stack.sandbox.scriptFaults([{ kind: 'status', status: 500 }]);
    const response = await stack.gql<{ nodes: (NodeData | null)[] }>('{ nodes(ids: ["1", "2"]) { id } }');
    expect(response.errors).toHaveLength(1);
    const error = firstError(response);
    expect(error.extensions?.code).toBe('UPSTREAM_ERROR');
    const failed = error.path?.[1];
    expect(error.path).toEqual(['nodes', failed]);
    const nodes = response.data?.nodes ?? [];
    expect(nodes.map((node, index) => (index === failed ? node : node?.id))).toEqual(failed === 0 ? [null, '2'] : ['1', null]);
  });

  it.each([
    ['101 ids', Array.from({ length: 101 }, (_, i) => String(i + 1)), 'ids', 'nodes: ids may hold at most 100 ids, got 101.'],
    ['an id that is no id', ['1', '2', 'abc'], 'ids.2', 'nodes: ids.2 must be a positive integer id, got "abc".'],
  ])('refuses %s before any call', async (_what, ids, argument, message) => {
    const response = await stack.gql<{ nodes: (NodeData | null)[] }>('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids });
    expect(response.data).toBeUndefined();
    expect(firstError(response)).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT', argument } });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('declares its cost: one call per id, and what is under the nodes once per id', async () => {
    const costOf = async (query: string): Promise<unknown> => (await stack.gql<unknown>(query)).extensions?.cost;
    const stat = 'stats(name: PAGE, period: TODAY) { totalCount }';
    expect(await costOf(`{ node(id: "1") { ... on Website { ${stat} } } }`)).toMatchObject({ requested: 2 });
    expect(await costOf(`{ nodes(ids: ["1", "2", "4"]) { ... on Website { ${stat} } } }`)).toMatchObject({ requested: 6 });
    expect(await costOf('{ nodes(ids: ["1", "2", "4"]) { id } }')).toMatchObject({ requested: 3 });
  });
});
