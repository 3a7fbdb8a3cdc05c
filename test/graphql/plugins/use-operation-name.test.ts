// A document whose operation operationName does not pick (several and no name, a name it does not
// hold, none at all) is answered with what it holds and how to pick, a documented code, HTTP 400, the
// usage figures (all zero) and no upstream call; over HTTP, as curl sends the writes of docs/queries.md.
import { parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { graphqlBlocks } from '../../docs.js';
import { KEY_1, dataOf, firstError, postGraphQL, present, useStack, type GraphQLResponse } from '../../fixture.js';

const stack = useStack();

const NOTHING_RAN = { cost: { requested: 0, limit: 100 }, upstreamCalls: 0, cache: { hits: 0, misses: 0, stale: 0 } };

const post = <T>(body: Record<string, unknown>): Promise<GraphQLResponse<T>> =>
  postGraphQL<T>(stack.endpoint, body, { authorization: `Bearer ${KEY_1}` });

const TWO_QUERIES = 'query Count { websites { totalCount } } query Domain { website(id: "1") { domain } }';

describe('several operations and no operationName', () => {
  const writes = present(
    graphqlBlocks(['docs/queries.md'])
      .map((block) => block.text)
      .find((block) => (block.match(/^mutation /gm) ?? []).length > 1),
    'the block of several mutations of docs/queries.md',
  );
  const names = parse(writes).definitions.map((definition) => (definition as OperationDefinitionNode).name?.value);

  it('the writes of docs/queries.md sent as they are: OPERATION_NAME_REQUIRED naming each operation and how to pick one', async () => {
    for (let request = 1; request <= 2; request++) {
      // The second comes from yoga's parse cache: refused all the same.
      const response = await post<unknown>({ query: writes });
      expect(response.status).toBe(400);
      const error = firstError(response);
      expect(error.message).toBe(
        `This document holds ${names.length} operations (${names.join(', ')}); send the name of the one to run as "operationName" (for example "operationName": "${names[0]}").`,
      );
      expect(error.extensions).toEqual({ code: 'OPERATION_NAME_REQUIRED', operations: names });
      expect(response.extensions).toEqual(NOTHING_RAN);
    }
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('over GET too', async () => {
    const response = await fetch(`${stack.endpoint}?query=${encodeURIComponent(TWO_QUERIES)}`, {
      headers: { authorization: `Bearer ${KEY_1}` },
    });
    expect(response.status).toBe(400);
    const json = (await response.json()) as GraphQLResponse<unknown>;
    expect(firstError({ ...json, status: response.status, headers: response.headers }).extensions).toEqual({
      code: 'OPERATION_NAME_REQUIRED',
      operations: ['Count', 'Domain'],
    });
  });

  it('runs the one operationName picks', async () => {
    expect(dataOf(await post<{ website: { domain: string } }>({ query: TWO_QUERIES, operationName: 'Domain' }))).toEqual({
      website: { domain: 'acme-analytics.com' },
    });
  });
});

describe('an operationName the document does not hold', () => {
  it.each([
    {
      title: 'a name none of its operations has',
      body: { query: TWO_QUERIES, operationName: 'Dashboard' },
      message: 'This document holds no operation named "Dashboard"; its operations are Count, Domain.',
      operations: ['Count', 'Domain'],
    },
    {
      title: 'a name for its one anonymous operation',
      body: { query: '{ websites { totalCount } }', operationName: 'Dashboard' },
      message: 'This document holds no operation named "Dashboard"; its one operation has no name: send no "operationName".',
      operations: ['(anonymous)'],
    },
    {
      title: 'a document of fragments only',
      body: { query: 'fragment F on Website { id }' },
      message: 'This document holds no operation (a query or a mutation) to run.',
      operations: [],
    },
  ])('$title: OPERATION_NOT_FOUND', async ({ body, message, operations }) => {
    const response = await post<unknown>(body);
    expect(response.status).toBe(400);
    expect(firstError(response).message).toBe(message);
    expect(firstError(response).extensions).toEqual({ code: 'OPERATION_NOT_FOUND', operations });
    expect(response.extensions).toEqual(NOTHING_RAN);
    expect(stack.sandbox.log.count).toBe(0);
  });
});
