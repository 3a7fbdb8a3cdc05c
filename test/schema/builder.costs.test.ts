// Costs are declared on the fields (schema/, Pothos's complexity plugin) and added up by the request's
// plan (schema/plan.ts) for graphql/plugins/use-cost-limit.ts; these are the figures it gives, and the rule that no field with
// a resolver of its own goes without a declared cost.
import { isObjectType, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { planRequest } from '../../src/schema/plan.js';

/** The cost the plan of one request counts (each call a request of its own). */
function operationCost(
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown>,
  against: GraphQLSchema,
  context: object,
): number | null {
  return planRequest(against, document, operationName, variables, context)?.cost() ?? null;
}

function cost(source: string, variables: Record<string, unknown> = {}, operationName?: string): number | null {
  return operationCost(parse(source), operationName, variables, schema, {});
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

  it('counts a document met again (yoga hands repeated requests the same parsed document) with its new variables and operation', () => {
    const sized = parse(`query($n: Int) { websites(perPage: $n) { nodes { ${STAT} } } }`);
    expect(operationCost(sized, undefined, { n: 50 }, schema, {})).toBe(51);
    expect(operationCost(sized, undefined, { n: 25 }, schema, {})).toBe(26);
    const conditional = parse(`query($x: Boolean!) { website(id: "1") { ${STAT.replace(' {', ' @include(if: $x) {')} } }`);
    for (const x of [false, true, false]) expect(operationCost(conditional, undefined, { x }, schema, {})).toBe(x ? 2 : 1);
    const two = parse(`query One { website(id: "1") { domain } } query Three { website(id: "1") { a: ${STAT} b: ${STAT} } }`);
    expect(operationCost(two, 'Three', {}, schema, {})).toBe(3);
    expect(operationCost(two, 'One', {}, schema, {})).toBe(1);
    expect(operationCost(two, 'Three', {}, schema, {})).toBe(3);
  });

  it("counts an operation without variables again on another day: a period's length, so its pages, follows the clock", () => {
    const document = parse('{ website(id: "1") { series(metric: VISITORS, period: THIS_YEAR) { range { from } } } }');
    const on = (day: string, timeZone = 'UTC') => ({ clock: { timeZone, now: () => Date.parse(`${day}T12:00:00Z`) } });
    // 5 days of daily rows fill 1 page, 365 fill 4: 1 for the website, 1 per page.
    for (const [day, expected] of [
      ['2026-01-05', 2],
      ['2026-12-31', 5],
      ['2026-12-31', 5],
      ['2026-01-05', 2],
    ] as const) {
      expect(operationCost(document, undefined, {}, schema, on(day))).toBe(expected);
    }
    // The same instant is another day in another time zone.
    expect(operationCost(document, undefined, {}, schema, on('2026-12-31', 'UTC'))).toBe(5);
    expect(
      operationCost(document, undefined, {}, schema, {
        clock: { timeZone: 'Pacific/Kiritimati', now: () => Date.parse('2026-12-31T12:00:00Z') },
      }),
    ).toBe(2);
  });

  it('leaves out what @skip and @include leave out', () => {
    const skippable = 'stats(name: VISITOR, from: "2026-01-01", to: "2026-01-31") @include(if: $x) { totalCount }';
    expect(cost(`query($x: Boolean!) { website(id: "1") { ${skippable} } }`, { x: false })).toBe(1);
    expect(cost(`query($x: Boolean!) { website(id: "1") { ${skippable} } }`, { x: true })).toBe(2);
    expect(cost(`query($x: Boolean!) { website(id: "1") @skip(if: $x) { domain } }`, { x: true })).toBe(0);
  });

  it('measures the operation that runs, by its name', () => {
    const document = `query A { website(id: "1") { domain } } query B { website(id: "1") { a: ${STAT} b: ${STAT} } }`;
    expect(cost(document, {}, 'A')).toBe(1);
    expect(cost(document, {}, 'B')).toBe(3);
    expect(cost(document, {})).toBeNull(); // which one would run is for execution to refuse
  });

  it('costs nothing for __typename and introspection, which clients add everywhere', () => {
    expect(cost('{ websites(perPage: 100) { __typename nodes { __typename id } } }')).toBe(1);
    expect(cost('{ __schema { types { name fields { name } } } }')).toBe(0);
  });

  it('counts each root mutation field once, not its payload', () => {
    expect(
      cost(
        'mutation { a: deleteWebsite(id: "1") { deletedId } b: createWebsite(input: { domain: "a.com" }) { website { id domain } userErrors { message } } }',
      ),
    ).toBe(2);
  });
});

describe('declared costs', () => {
  it('every field with a resolver of its own declares its cost where it is defined', () => {
    const undeclared: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const extensions = field.extensions as { pothosExposedField?: string; pothosOptions?: { complexity?: unknown } };
        // An exposed field reads a property of its parent: it cannot reach the upstream.
        if (extensions.pothosExposedField !== undefined) continue;
        if (extensions.pothosOptions?.complexity === undefined) undeclared.push(`${type.name}.${field.name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});
