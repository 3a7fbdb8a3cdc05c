// With introspection off (production's default), an error reveals no name of the schema that the
// request did not send: no "Did you mean …?" for a field, an argument, a type or an enum value, in
// validation or in the variables' coercion. With introspection on, graphql's suggestions stay.
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, postGraphQL, startStack, type Stack } from '../fixture.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const MISTAKES: [string, Record<string, unknown>?][] = [
  ['{ websit(id: "1") { id } }'],
  ['{ website(id: "1") { domian } }'],
  ['{ website(idd: "1") { id } }'],
  ['{ website(id: "1") { ... on Websit { id } } }'],
  ['{ website(id: "1") { stats(name: PAGES, period: LAST_30_DAYS) { totalCount } } }'],
  ['query($n: StatName!) { website(id: "1") { stats(name: $n, period: LAST_30_DAYS) { totalCount } } }', { n: 'PAGES' }],
];

const messagesOf = async (current: Stack): Promise<string[]> => {
  const messages: string[] = [];
  for (const [query, variables] of MISTAKES) {
    const answer = await postGraphQL(current.endpoint, { query, variables }, { authorization: `Bearer ${KEY_1}` });
    expect(answer.errors?.length, query).toBeGreaterThan(0);
    messages.push(...(answer.errors ?? []).map((error) => error.message));
  }
  return messages;
};

describe('field suggestions', () => {
  it('are gone from every error when introspection is off', async () => {
    stack = await startStack({ env: { NODE_ENV: 'production' } });
    const messages = await messagesOf(stack);
    expect(messages.filter((message) => message.includes('Did you mean'))).toEqual([]);
    expect(messages).toContain('Cannot query field "websit" on type "Query".');
    expect(messages).toContain('Value "PAGES" does not exist in "StatName" enum.');
  });

  it('stay when introspection is on', async () => {
    stack = await startStack({ env: { NODE_ENV: 'production', INTROSPECTION: 'on' } });
    const messages = await messagesOf(stack);
    expect(messages.filter((message) => message.includes('Did you mean')).length).toBeGreaterThanOrEqual(5);
  });
});
