// Refuses, before validation, a document that selects too many fields with its fragments expanded:
// thirty fragments that each spread the next twice are under 2 KB and expand to 2^30 fields, which
// every pass that follows fragments would pay for. The plan counts it (each fragment once).
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { documentPlan } from '../../schema/plan.js';
import type { ErrorCode } from '../../errors.js';
import { integer } from '../../settings.js';

export const FIELD_LIMIT_SETTINGS = {
  fields: integer('MAX_FIELDS', {
    fallback: 1000,
    min: 1,
    max: 1_000_000,
    unit: 'fields',
    doc: 'fields selected, with every fragment spread expanded',
  }),
};
const DEFAULT_FIELD_LIMIT = FIELD_LIMIT_SETTINGS.fields.fallback;

export function useFieldLimit({ limit = DEFAULT_FIELD_LIMIT }: { limit?: number } = {}): Plugin {
  return {
    onValidate({ params, setResult }) {
      const count = documentPlan(params.documentAST).fieldCount;
      if (count <= limit) return;
      // Past 2^53 the figure is no longer exact.
      const found = Number.isSafeInteger(count)
        ? count.toLocaleString('en-US')
        : `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}`;
      setResult([
        new GraphQLError(
          `This document selects ${found} fields once its fragments are expanded; the limit is ${limit} (MAX_FIELDS). ` +
            'Spread each fragment where it is needed once, or split the document.',
          { extensions: { code: 'FIELD_LIMIT_EXCEEDED' satisfies ErrorCode, fieldLimit: limit } },
        ),
      ]);
    },
  };
}
