// The Date and DateTime scalars, and the validation rule that names the argument of a bad Date literal.
import { GraphQLError, Kind, getNamedType, type ASTVisitor, type ValidationContext } from 'graphql';
import { builder } from './builder.js';
import { parseCalendarDate } from './validate.js';

const DATE_RULE = 'must be a real calendar date written YYYY-MM-DD';

builder.scalarType('Date', {
  description: 'A calendar date in the form YYYY-MM-DD (UTC). Impossible dates such as 2026-02-30 are rejected.',
  // RFC 3339's full-date.
  specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc3339#section-5.6',
  serialize: (value) => value,
  parseValue: (value) => {
    const date = typeof value === 'string' ? parseCalendarDate(value) : null;
    if (date === null) {
      throw new GraphQLError(`Date ${DATE_RULE}, got ${JSON.stringify(value)}.`, { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return date;
  },
  // dateLiteralsRule below refuses a bad literal, naming its argument; the resolvers check dates again.
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('Date must be a string "YYYY-MM-DD".', { nodes: ast, extensions: { code: 'BAD_USER_INPUT' } });
    }
    return ast.value;
  },
});

builder.scalarType('DateTime', {
  description: 'A point in time as an ISO-8601 string in UTC, e.g. 2024-05-01T10:00:00.000Z.',
  // The GraphQL Scalars specification of DateTime (RFC 3339's date-time).
  specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
      throw new GraphQLError('DateTime must be an ISO-8601 string.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return new Date(value).toISOString();
  },
});

/** `Argument "to" of Website.stats must be a real calendar date written YYYY-MM-DD, got "2026-11-31".` */
export function dateLiteralsRule(context: ValidationContext): ASTVisitor {
  return {
    Argument(node) {
      const argument = context.getArgument();
      const field = context.getFieldDef();
      const parent = context.getParentType();
      if (!argument || getNamedType(argument.type).name !== 'Date' || node.value.kind !== Kind.STRING) return;
      if (parseCalendarDate(node.value.value) !== null) return;
      const where = field && parent ? ` of ${parent.name}.${field.name}` : '';
      context.reportError(
        new GraphQLError(`Argument "${argument.name}"${where} ${DATE_RULE}, got ${JSON.stringify(node.value.value)}.`, {
          nodes: node.value,
          extensions: { code: 'BAD_USER_INPUT', argument: argument.name },
        }),
      );
    },
  };
}
