// The README's GraphQL examples run as written against the sandbox.
import { readFileSync } from 'node:fs';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { postGraphQL, useStack } from './fixture.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

const stack = useStack();

describe('README examples', () => {
  it('has examples', () => expect(blocks.length).toBeGreaterThanOrEqual(3));

  it.each(blocks.map((block, i) => [i, block]))('block %i runs without errors', async (_i, block) => {
    const operations = parse(block).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    for (const operation of operations) {
      const response = await postGraphQL<Record<string, { userErrors?: unknown[] }>>(
        stack.endpoint,
        { query: block, operationName: operation.name?.value },
        { authorization: 'Bearer sandbox-key-1' },
      );
      expect(response.errors).toBeUndefined();
      for (const payload of Object.values(response.data ?? {})) {
        if (payload && 'userErrors' in payload) expect(payload.userErrors).toEqual([]);
      }
    }
  });
});
