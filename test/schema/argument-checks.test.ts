// The walk of an operation's argument checks (the plan's refusals: src/schema/plan.ts), on the real schema: every
// field with arguments declares its checks, and each fragment is walked once however often it is spread.
import { isObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { planRequest } from '../../src/schema/plan.js';

describe("the plan's refusals", () => {
  it('every field with arguments declares its checks', () => {
    const unchecked: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        if (field.args.length > 0 && field.extensions.argumentProblems === undefined) unchecked.push(`${type.name}.${field.name}`);
      }
    }
    expect(unchecked).toEqual([]);
  });

  it('walks each fragment once: a chain of 40 fragments each spreading the next twice is one refusal, at once', () => {
    const depth = 40;
    const fragments = Array.from({ length: depth }, (_, i) =>
      i === depth - 1
        ? `fragment F${i} on Website { stats(name: PAGE, period: TODAY, perPage: 7) { totalCount } }`
        : `fragment F${i} on Website { ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    const document = parse(`{ website(id: "1") { ...F0 } }\n${fragments}`);
    // Expanded, that is 2^39 statistics: a walk that followed every spread would never end.
    const refusals = planRequest(schema, document, undefined, {}, {})?.selection?.refusals() ?? [];
    expect(refusals.map((refusal) => [refusal.fieldPath.join('.'), refusal.problem.field.join('.')])).toEqual([
      ['website.stats', 'perPage'],
    ]);
  });
});
