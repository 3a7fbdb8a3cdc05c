// The look-ahead of statistics walks each fragment once, however often it is spread: a chain of
// fragments that each spread the next one twice would otherwise be walked 2^n times.
import { Kind, parse, type FieldNode, type GraphQLResolveInfo, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/schema/context.js';
import { websiteLookingAhead } from '../../src/schema/prefetch.js';
import { schema } from '../../src/schema/index.js';
import { planRequest } from '../../src/schema/plan.js';
import type { Page, Stat, StatsQuery } from '../../src/domain.js';

function chain(levels: number): string {
  const fragments = Array.from({ length: levels }, (_, i) =>
    i + 1 < levels
      ? `fragment F${i} on Website { stats(name: PAGE, from: "2026-01-01", to: "2026-01-31") { totalCount } ...F${i + 1} ...F${i + 1} }`
      : `fragment F${i} on Website { s${i}: stats(name: COUNTRY, from: "2026-01-01", to: "2026-01-31") { totalCount } }`,
  );
  return `{ website(id: "1") { ...F0 } } ${fragments.join(' ')}`;
}

/** The look-ahead run on the document's `website` field, with the request's plan, counting the statistics it starts. */
function lookAhead(text: string) {
  const document = parse(text);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const loads: StatsQuery[] = [];
  const source = {
    website: () => Promise.resolve({}),
    statPage: (query: StatsQuery) => {
      loads.push(query);
      return Promise.resolve({} as Page<Stat>);
    },
  };
  const lookahead: GatewayContext['lookahead'] = new Map();
  const context = {
    source: source as unknown as GatewayContext['source'],
    clock: { now: () => Date.parse('2026-03-15T12:00:00Z'), timeZone: 'UTC' },
    lookahead,
    keyKnown: true,
  } as GatewayContext;
  planRequest(schema, document, undefined, {}, context);
  const info = {
    schema,
    fieldNodes: [operation.selectionSet.selections[0] as FieldNode],
    returnType: schema.getQueryType()?.getFields().website?.type,
  } as unknown as GraphQLResolveInfo;
  void websiteLookingAhead('1', context, info);
  return { loads, lookahead };
}

describe('websiteLookingAhead', () => {
  it('walks each fragment of a 40-level doubling chain once and starts each statistic once', () => {
    const { loads, lookahead } = lookAhead(chain(40));
    expect(loads.map((query) => query.name).sort()).toEqual(['country', ...Array(39).fill('page')].sort());
    expect(lookahead.size).toBe(40); // one per stats field node
  });

  it('still walks a fragment that a skipped spread left out elsewhere', () => {
    const { loads } = lookAhead(`{ website(id: "1") { ...A @skip(if: true) ... on Website { ...A } } }
      fragment A on Website { stats(name: BROWSER, from: "2026-01-01", to: "2026-01-31") { totalCount } }`);
    expect(loads.map((query) => query.name)).toEqual(['browser']);
  });
});
