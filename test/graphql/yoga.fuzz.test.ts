// Property-based fuzzing: random and mutated documents and variables thrown at the gateway over
// real HTTP. Every answer must be a well-formed GraphQL response (never a 5xx, never a hang), and a
// request refused as a whole must not have cost an upstream call.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_1, startStack, type Stack } from '../fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const VALID = [
  '{ websites { totalCount nodes { id domain } } }',
  '{ websites(search: "acme", favorite: true, sortBy: DOMAIN, sort: ASC, perPage: 25, page: 1) { nodes { id } pageInfo { hasNextPage } } }',
  '{ website(id: "1") { domain privacy stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-15") { nodes { value count } } } }',
  'query Q($id: ID!, $from: Date!) { website(id: $id) { a: stats(name: PAGE, from: $from, to: "2026-03-15", perPage: 50) { totalCount } } }',
  '{ stats(websiteId: "1", name: VISITOR, from: "2026-02-01", to: "2026-03-15", sortBy: VALUE, sort: ASC) { nodes { value count } } }',
  'mutation { createWebsite(input: { domain: "fuzz.example.com", excludeParams: ["a"] }) { website { id } userErrors { field message code } } }',
  'mutation U($id: ID!) { updateWebsite(id: $id, input: { favorite: true }) { userErrors { message } } }',
  'mutation { deleteWebsite(id: "999999") { deletedId userErrors { code } } }',
  '{ __schema { queryType { name } } }',
];

const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  ':',
  '$',
  '@',
  '...',
  '"',
  '!',
  '[',
  ']',
  '=',
  ',',
  'website',
  'stats',
  'perPage: 7',
  'page: -1',
  'from: "2026-02-30"',
  'id: "abc"',
  'name: NOPE',
  '__typename',
  'fragment F on Website { id }',
  '\u0000',
  '\uD800',
  '#',
  '\n',
];

/** A valid document with random edits: characters deleted, tokens inserted, pieces duplicated. */
const mutatedDocument = fc
  .tuple(
    fc.constantFrom(...VALID),
    fc.array(fc.tuple(fc.nat(), fc.oneof(fc.constant(''), fc.constantFrom(...TOKENS), fc.string({ maxLength: 8 })), fc.nat({ max: 6 })), {
      minLength: 1,
      maxLength: 6,
    }),
  )
  .map(([source, edits]) =>
    edits.reduce((doc, [at, insert, cut]) => {
      const i = doc.length === 0 ? 0 : at % doc.length;
      return doc.slice(0, i) + insert + doc.slice(i + cut);
    }, source),
  );

const document = fc.oneof(
  { weight: 5, arbitrary: mutatedDocument },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constantFrom(...VALID) },
);

const variables = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(fc.constantFrom('id', 'from', 'input', 'x'), fc.jsonValue({ maxDepth: 3 })),
  fc.record({ id: fc.oneof(fc.constant('1'), fc.string(), fc.integer()), from: fc.oneof(fc.constant('2026-03-01'), fc.string()) }),
  fc.jsonValue({ maxDepth: 2 }),
);

const body = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ query: document, variables, operationName: fc.option(fc.constantFrom('Q', 'U', 'X', ''), { nil: undefined }) }),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

interface Answer {
  status: number;
  json: unknown;
}

async function send(payload: unknown): Promise<Answer> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${KEY_1}` },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, json: await response.json() };
}

function assertWellFormed({ status, json }: Answer): void {
  expect(status).toBeLessThan(500);
  expect(typeof json).toBe('object');
  const result = json as { data?: unknown; errors?: unknown };
  expect('data' in result || 'errors' in result).toBe(true);
  if ('errors' in result) {
    expect(Array.isArray(result.errors)).toBe(true);
    for (const error of result.errors as unknown[]) {
      expect(typeof (error as { message?: unknown }).message).toBe('string');
      // Nothing internal leaks: no stack traces, no upstream pages.
      expect(JSON.stringify(error)).not.toMatch(/\n\s+at |<html|node_modules/i);
    }
  }
}

describe('fuzzing the gateway', () => {
  it('answers every random or mutated request with a well-formed GraphQL response', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        stack.sandbox.log.reset();
        const answer = await send(payload);
        assertWellFormed(answer);
        // Refused as a whole (bad JSON shape, parse or validation error, bad variables, cost): no call.
        if (!('data' in (answer.json as object)) || (answer.json as { data: unknown }).data === undefined) {
          expect(stack.sandbox.log.count).toBe(0);
        }
      }),
      { numRuns: 400, seed: 20261121 },
    );
  }, 120_000);

  it('keeps answering with random seeds too', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => assertWellFormed(await send(payload))),
      { numRuns: 150 },
    );
  }, 120_000);
});
