// The limits on the document itself, before anything runs: tokens (while parsing: a huge document is
// never parsed whole), then depth, aliases and directives (as validation rules). graphql-armor counts;
// this says what was refused the way the gateway's other limits do: a code per limit, the limit (and
// what was found) in `extensions`, and a message that names the limit and its setting. graphql-armor's
// own errors begin "Syntax Error:" and carry no code (or GRAPHQL_PARSE_FAILED), as if the text were not
// GraphQL.
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../../errors.js';
import { integer } from '../../settings.js';

export interface DocumentLimits {
  /** Lexical tokens of the document (MAX_TOKENS). */
  tokens: number;
  /** Depth of nested fields, fragments flattened, introspection included (MAX_DEPTH). */
  depth: number;
  /** Aliases of an operation, its fragments' included (MAX_ALIASES). */
  aliases: number;
  /** Directives of an operation, its fragments' included (MAX_DIRECTIVES). */
  directives: number;
}

/** MAX_TOKENS, MAX_DEPTH, MAX_ALIASES and MAX_DIRECTIVES when unset. */
/** The document's limits, checked while it is parsed and validated. */
export const DOCUMENT_LIMIT_SETTINGS = {
  depth: integer('MAX_DEPTH', { fallback: 15, min: 2, max: 100, unit: 'levels', doc: 'deepest nesting of fields' }),
  aliases: integer('MAX_ALIASES', { fallback: 30, min: 1, max: 1_000, unit: 'aliases', doc: 'aliases in an operation' }),
  tokens: integer('MAX_TOKENS', { fallback: 2_000, min: 100, max: 100_000, unit: 'tokens', doc: 'tokens in a document' }),
  directives: integer('MAX_DIRECTIVES', { fallback: 20, min: 1, max: 1_000, unit: 'directives', doc: 'directives in an operation' }),
};

/** What graphql-armor found; it says so only in its message ("…, found 25.", with exposeLimits). */
const foundIn = (error: GraphQLError): number => Number(/found (\d+)/.exec(error.message)?.[1]);

/** A validation rule's refusal, reported as a validation error of the operation (HTTP 400, nothing runs). */
function reportRefusal(describe: (found: number) => GraphQLError) {
  return (context: ValidationContext | null, error: GraphQLError): void => {
    context?.reportError(describe(foundIn(error)));
  };
}

export function useDocumentLimits(limits: DocumentLimits): Plugin {
  const { tokens, depth, aliases, directives } = limits;
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        maxTokensPlugin({
          n: tokens,
          propagateOnRejection: false,
          // Thrown from the lexer: parsing stops at the first token past the limit, and the parse
          // fails with this error (yoga answers it with HTTP 400).
          onReject: [
            () => {
              throw new GraphQLError(
                `This document has more than ${tokens} tokens (names, punctuation and values); the limit is ${tokens} (MAX_TOKENS). ` +
                  'Send a shorter document, or split it.',
                { extensions: { code: 'TOKEN_LIMIT_EXCEEDED' satisfies ErrorCode, tokenLimit: tokens } },
              );
            },
          ],
        }),
      );
      addPlugin(
        // Introspection counts too: the schema has no cycles, so it is the only way to nest deeply.
        maxDepthPlugin({
          n: depth,
          flattenFragments: true,
          ignoreIntrospection: false,
          exposeLimits: true,
          propagateOnRejection: false,
          onReject: [
            reportRefusal(
              (found) =>
                new GraphQLError(
                  `This operation nests fields ${found} deep; the limit is ${depth} (MAX_DEPTH). Select less deeply, or split it.`,
                  {
                    extensions: { code: 'DEPTH_LIMIT_EXCEEDED' satisfies ErrorCode, depthLimit: depth, depth: found },
                  },
                ),
            ),
          ],
        }),
      );
      addPlugin(
        maxAliasesPlugin({
          n: aliases,
          exposeLimits: true,
          propagateOnRejection: false,
          onReject: [
            reportRefusal(
              (found) =>
                new GraphQLError(
                  `This operation uses ${found} aliases; the limit is ${aliases} (MAX_ALIASES). Split it into several requests.`,
                  {
                    extensions: { code: 'ALIAS_LIMIT_EXCEEDED' satisfies ErrorCode, aliasLimit: aliases, aliases: found },
                  },
                ),
            ),
          ],
        }),
      );
      addPlugin(
        maxDirectivesPlugin({
          n: directives,
          exposeLimits: true,
          propagateOnRejection: false,
          onReject: [
            reportRefusal(
              (found) =>
                new GraphQLError(
                  `This operation uses ${found} directives; the limit is ${directives} (MAX_DIRECTIVES). Split it into several requests.`,
                  {
                    extensions: { code: 'DIRECTIVE_LIMIT_EXCEEDED' satisfies ErrorCode, directiveLimit: directives, directives: found },
                  },
                ),
            ),
          ],
        }),
      );
    },
  };
}
