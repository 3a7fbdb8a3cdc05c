// The one place that owns Pothos: plugins, scalars and the context type.
import SchemaBuilder from '@pothos/core';
import { GraphQLError, Kind } from 'graphql';
import type { GatewayContext } from '../context.js';
import { parseCalendarDate } from './validate.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    Date: { Input: string; Output: string };
    DateTime: { Input: string; Output: string };
  };
}>({ defaultFieldNullability: false });

builder.scalarType('Date', {
  description: 'A calendar date in the form YYYY-MM-DD (UTC). Impossible dates such as 2026-02-30 are rejected.',
  serialize: (value) => value,
  parseValue: (value) => {
    const date = typeof value === 'string' ? parseCalendarDate(value) : null;
    if (date === null) {
      throw new GraphQLError(`Date must be a real calendar date written YYYY-MM-DD, got ${JSON.stringify(value)}.`, {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return date;
  },
  parseLiteral: (ast) => {
    const date = ast.kind === Kind.STRING ? parseCalendarDate(ast.value) : null;
    if (date === null) {
      throw new GraphQLError('Date must be a real calendar date written as a string "YYYY-MM-DD".', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return date;
  },
});

builder.scalarType('DateTime', {
  description: 'A point in time as an ISO-8601 string in UTC, e.g. 2024-05-01T10:00:00.000Z.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
      throw new GraphQLError('DateTime must be an ISO-8601 string.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return new Date(value).toISOString();
  },
});

builder.queryType({ description: 'Reads: websites and their statistics, with the caller\'s API key.' });
builder.mutationType({ description: 'Writes: create, update and delete websites. Never retried by the gateway.' });
