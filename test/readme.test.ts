// The README's GraphQL examples run as written against the sandbox, each block on a fresh one (a
// block's mutations, such as a delete, must not change what the next block finds).
import { readFileSync } from 'node:fs';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KEY_1, postGraphQL, startStack } from './fixture.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

/** How many counts, totals and sums above zero a response holds, at any depth. */
function figuresOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + figuresOf(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [name, field]) =>
      sum + (['count', 'total', 'totalCount', 'sum', 'visitors', 'pageviews'].includes(name) && typeof field === 'number' && field > 0 ? 1 : figuresOf(field)),
    0,
  );
}

describe('README examples', () => {
  it('has examples', () => expect(blocks.length).toBeGreaterThanOrEqual(3));

  it.each(blocks.map((block, i) => [i, block]))('block %i runs without errors', async (_i, block) => {
    const stack = await startStack();
    try {
      const operations = parse(block).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      for (const operation of operations) {
        const body = { query: block, operationName: operation.name?.value };
        if (block.includes('@defer') || block.includes('@stream')) {
          // Incremental delivery: read the whole multipart answer; no part may carry an error.
          const response = await fetch(stack.endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${KEY_1}` },
            body: JSON.stringify(body),
          });
          const text = await response.text();
          expect(response.status).toBe(200);
          expect(text).toContain('"hasNext":false');
          expect(text).not.toContain('"errors"');
          continue;
        }
        const response = await postGraphQL<Record<string, { userErrors?: unknown[] }>>(stack.endpoint, body, {
          authorization: `Bearer ${KEY_1}`,
        });
        expect(response.errors).toBeUndefined();
        for (const payload of Object.values(response.data ?? {})) {
          if (payload && 'userErrors' in payload) expect(payload.userErrors).toEqual([]);
        }
        // A query must return data, not only no errors: some figure above zero somewhere in it.
        if (operation.operation === 'query') expect(figuresOf(response.data), operation.name?.value).toBeGreaterThan(0);
      }
    } finally {
      await stack.close();
    }
  });
});
