// The walk of an operation's argument checks (src/schema/argument-checks.ts), on the real schema: every
// field with arguments declares its checks, and each fragment is walked once however often it is spread.
import { Kind, isObjectType, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { argumentRefusals } from '../../src/schema/argument-checks.js';
import { schema } from '../../src/schema/index.js';

describe('argumentRefusals', () => {
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
    const operation = document.definitions.find(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    );
    if (operation === undefined) throw new Error('no operation');
    const byName = Object.fromEntries(
      document.definitions.flatMap((definition) =>
        definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition]] : [],
      ),
    );
    // Expanded, that is 2^39 statistics: a walk that followed every spread would never end.
    const refusals = argumentRefusals({ schema, operation, fragments: byName, variables: {} });
    expect(refusals.map((refusal) => [refusal.fieldPath.join('.'), refusal.problem.field.join('.')])).toEqual([
      ['website.stats', 'perPage'],
    ]);
  });
});
