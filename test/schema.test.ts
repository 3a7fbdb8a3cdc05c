import { readFileSync } from 'node:fs';
import {
  buildSchema,
  findBreakingChanges,
  findDangerousChanges,
  isEnumType,
  isInputObjectType,
  isIntrospectionType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/schema/index.js';
import { printedSchema } from '../src/schema/print.js';

describe('schema.graphql', () => {
  it('matches the schema printed from the code (run `npm run schema` after changing it)', () => {
    const checkedIn = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(printedSchema());
  });

  it('documents every type, field, argument, input field and enum value', () => {
    const missing: string[] = [];
    const own = Object.values(schema.getTypeMap()).filter(
      (type: GraphQLNamedType) => !isIntrospectionType(type) && !(isScalarType(type) && isSpecifiedScalarType(type)),
    );
    for (const type of own) {
      if (!type.description) missing.push(type.name);
      if (isObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of field.args) if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if (isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) if (!field.description) missing.push(`${type.name}.${field.name}`);
      }
      if (isEnumType(type)) {
        for (const value of type.getValues()) if (!value.description) missing.push(`${type.name}.${value.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has exactly the public surface of DESIGN.md (types, fields, arguments, defaults)', () => {
    const design = readFileSync(new URL('../../shared/DESIGN.md', import.meta.url), 'utf8');
    const sdl = /```graphql\n([\s\S]*?)```/.exec(design)![1]!;
    const designed = buildSchema(sdl);
    // Equivalent when neither direction has a breaking or dangerous change.
    const differences = [
      ...findBreakingChanges(designed, schema),
      ...findDangerousChanges(designed, schema),
      ...findBreakingChanges(schema, designed),
      ...findDangerousChanges(schema, designed),
    ]
      .map((change) => change.description)
      // Pothos registers every standard scalar (Float) even when unused: not part of the surface.
      .filter((description) => !description.startsWith('Standard scalar'));
    expect(differences).toEqual([]);
  });
});
