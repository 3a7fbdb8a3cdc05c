// A document is validated once: the plugins' onValidate (the rules they add) run for a document not
// validated yet, and a document met again is answered with its first result, refusals included.
import { GraphQLError, type ValidationRule } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createValidationCache } from '../../../src/graphql/plugins/use-validation-cache.js';
import { startStack } from '../../fixture.js';

/** A rule refusing every field called `secret`. */
const noSecret: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === 'secret') context.reportError(new GraphQLError('No secrets.', { nodes: [node] }));
  },
});

function yogaWith(plugins: Plugin[]) {
  const validation = createValidationCache();
  return createYoga({
    schema: createSchema({
      typeDefs: 'type Query { hello: String! secret: String! }',
      resolvers: { Query: { hello: () => 'hello', secret: () => 'shh' } },
    }),
    logging: false,
    parserAndValidationCache: { validationCache: false },
    plugins: [...plugins, validation.plugin].map(validation.onlyToValidate),
  });
}

async function ask(yoga: ReturnType<typeof yogaWith>, query: string): Promise<{ data?: unknown; errors?: { message: string }[] }> {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
}

describe('createValidationCache', () => {
  it("runs the plugins' onValidate once per document, theirs and the plugins they add, and answers a repeat with its result", async () => {
    const seen: string[] = [];
    const adding = (name: string): Plugin => ({
      onValidate({ params, addValidationRule }) {
        seen.push(`${name}: ${params.documentAST.loc?.source.body}`);
        addValidationRule(noSecret);
      },
    });
    const outer: Plugin = {
      onPluginInit({ addPlugin }) {
        addPlugin(adding('added'));
      },
    };
    const yoga = yogaWith([adding('own'), outer]);
    for (let round = 0; round < 3; round++) {
      expect(await ask(yoga, '{ hello }')).toEqual({ data: { hello: 'hello' } });
      const refused = await ask(yoga, '{ secret }');
      expect(refused.data).toBeUndefined();
      // Both plugins added the rule to the first validation: it reported twice.
      expect(refused.errors?.map((error) => error.message)).toEqual(['No secrets.', 'No secrets.']);
    }
    expect(seen).toEqual(['own: { hello }', 'added: { hello }', 'own: { secret }', 'added: { secret }']);
  });

  it('keeps a plugin without onValidate as it is (and its own), and their other hooks run on every request', async () => {
    let parsed = 0;
    const counting: Plugin = {
      onParse() {
        parsed++;
      },
    };
    const validation = createValidationCache();
    expect(validation.onlyToValidate(counting)).toBe(counting);
    expect(validation.onlyToValidate(validation.plugin)).toBe(validation.plugin);
    const yoga = yogaWith([counting]);
    for (let round = 0; round < 3; round++) expect(await ask(yoga, '{ hello }')).toEqual({ data: { hello: 'hello' } });
    expect(parsed).toBe(3);
  });
});

describe("the gateway's validation, each document asked twice", () => {
  it('refuses what its rules refuse (depth, aliases, dates, introspection, @defer on a mutation) the second time too', async () => {
    const stack = await startStack({ env: { INTROSPECTION: 'false', MAX_DEPTH: '3', MAX_ALIASES: '2' } });
    try {
      const refusals: [string, string][] = [
        ['{ website(id: "1") { stats(name: VISITOR, from: "2026-01-01", to: "2026-01-31") { pageInfo { page } } } }', 'DEPTH'],
        ['{ a: website(id: "1") { id } b: website(id: "1") { id } c: website(id: "1") { id } }', 'ALIAS'],
        ['{ website(id: "1") { stats(name: VISITOR, from: "2026-02-30", to: "2026-03-01") { totalCount } } }', '2026-02-30'],
        ['{ __schema { types { name } } }', 'introspection'],
        ['mutation { ... @defer { deleteWebsite(id: "1") { deletedId } } }', 'defer'],
      ];
      for (const [query, expected] of refusals) {
        for (let round = 0; round < 2; round++) {
          const answer = await stack.gql(query);
          expect(answer.data ?? null, query).toBeNull();
          expect(JSON.stringify(answer.errors), query).toMatch(new RegExp(expected, 'i'));
        }
      }
      for (let round = 0; round < 2; round++) {
        const answer = await stack.gql('{ website(id: "1") { id } }');
        expect(answer.errors).toBeUndefined();
        expect(answer.data).toEqual({ website: { id: '1' } });
      }
    } finally {
      await stack.close();
    }
  });
});
