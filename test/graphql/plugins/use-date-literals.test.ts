import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useDateLiterals } from '../../../src/graphql/plugins/use-date-literals.js';
import { schema } from '../../../src/schema/index.js';

const yoga = createYoga({ schema, logging: false, plugins: [useDateLiterals()] });

async function errorsOf(query: string): Promise<{ message: string; locations?: unknown; extensions?: unknown }[]> {
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return ((await response.json()) as { errors?: { message: string }[] }).errors ?? [];
}

describe('useDateLiterals', () => {
  it('refuses an impossible Date literal, naming the argument, the value and where it is', async () => {
    const errors = await errorsOf('{\n  website(id: "1") { stats(name: PAGE, from: "2026-11-01", to: "2026-11-31") { totalCount } }\n}');
    expect(errors).toEqual([
      {
        message: 'Argument "to" of Website.stats must be a real calendar date written YYYY-MM-DD, got "2026-11-31".',
        locations: [{ line: 2, column: 64 }],
        extensions: { code: 'BAD_USER_INPUT', argument: 'to' },
      },
    ]);
  });

  it('reports each bad literal, and lets real dates through', async () => {
    const errors = await errorsOf('{ stats(websiteId: "1", name: PAGE, from: "2025-02-29", to: "2024-02-29") { totalCount } }');
    expect(errors.map((error) => error.message)).toEqual([
      'Argument "from" of Query.stats must be a real calendar date written YYYY-MM-DD, got "2025-02-29".',
    ]);
  });

  it('a Date that is not a string is refused by the scalar itself', async () => {
    const errors = await errorsOf('{ stats(websiteId: "1", name: PAGE, from: 20260101, to: "2026-01-02") { totalCount } }');
    expect(errors[0]?.message).toContain('Date must be a string "YYYY-MM-DD".');
  });
});
