import { Kind, parse, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { operationCost } from '../src/cost.js';
import { schema } from '../src/schema/index.js';

function cost(source: string, variables: Record<string, unknown> = {}): number {
  const document = parse(source);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  return operationCost(schema, operation, fragments, variables);
}

const STAT = 'stats(name: VISITOR, from: "2026-01-01", to: "2026-01-31") { totalCount }';

describe('operationCost', () => {
  it('counts one per upstream field', () => {
    expect(cost('{ website(id: "1") { domain } }')).toBe(1);
    expect(cost(`{ website(id: "1") { a: ${STAT} b: ${STAT} c: ${STAT} } }`)).toBe(4);
    expect(cost('{ __typename }')).toBe(0);
  });

  it('counts Query.stats twice: it reads the website too, to check the caller owns it', () => {
    expect(cost(`{ ${STAT.replace('stats(', 'stats(websiteId: "1", ')} }`)).toBe(2);
  });

  it('multiplies fields under websites by its page size: a dashboard list passes, an amplification does not', () => {
    expect(cost(`{ websites(perPage: 25) { nodes { ${STAT} } } }`)).toBe(26);
    const six = Array.from({ length: 6 }, (_, i) => `s${i}: ${STAT}`).join(' ');
    expect(cost(`{ websites(perPage: 100) { nodes { ${six} } } }`)).toBe(601);
    expect(cost('{ websites(perPage: 100) { totalCount nodes { domain } } }')).toBe(1);
    expect(cost(`{ websites { nodes { ${STAT} } } }`)).toBe(11);
  });

  it('reads page sizes from variables and follows fragments', () => {
    const query = `query($n: Int) { websites(perPage: $n) { ...W } } fragment W on WebsiteList { nodes { ... on Website { ${STAT} } } }`;
    expect(cost(query, { n: 50 })).toBe(51);
    expect(cost(query, {})).toBe(11);
  });

  it('leaves out what @skip and @include leave out', () => {
    const skippable = 'stats(name: VISITOR, from: "2026-01-01", to: "2026-01-31") @include(if: $x) { totalCount }';
    expect(cost(`query($x: Boolean!) { website(id: "1") { ${skippable} } }`, { x: false })).toBe(1);
    expect(cost(`query($x: Boolean!) { website(id: "1") { ${skippable} } }`, { x: true })).toBe(2);
    expect(cost(`query($x: Boolean!) { website(id: "1") @skip(if: $x) { domain } }`, { x: true })).toBe(0);
  });

  it('counts each root mutation field once, not its payload', () => {
    expect(cost('mutation { a: deleteWebsite(id: "1") { deletedId } b: createWebsite(input: { domain: "a.com" }) { website { id domain } userErrors { message } } }')).toBe(2);
  });
});
