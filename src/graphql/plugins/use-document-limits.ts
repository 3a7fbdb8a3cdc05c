// The limits on the document, before anything runs: tokens (while parsing), then depth, aliases and
// directives (validation rules). graphql-armor counts; the refusals are the gateway's own (a code, the
// limit in `extensions`, a message naming the setting): armor's read as "Syntax Error:" with no code.
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../../errors.js';
import { type SettingsOf, integer } from '../../settings.js';

export const DOCUMENT_LIMIT_SETTINGS = {
  depth: integer('MAX_DEPTH', { fallback: 15, min: 2, max: 100, unit: 'levels', doc: 'deepest nesting of fields' }),
  aliases: integer('MAX_ALIASES', { fallback: 30, min: 1, max: 1_000, unit: 'aliases', doc: 'aliases in an operation' }),
  tokens: integer('MAX_TOKENS', { fallback: 2_000, min: 100, max: 100_000, unit: 'tokens', doc: 'tokens in a document' }),
  directives: integer('MAX_DIRECTIVES', { fallback: 20, min: 1, max: 1_000, unit: 'directives', doc: 'directives in an operation' }),
};

/** What graphql-armor found; it says so only in its message ("…, found 25.", with exposeLimits). */
const foundIn = (error: GraphQLError): number => Number(/found (\d+)/.exec(error.message)?.[1]);

/** A validation rule's refusal, reported as a validation error of the operation (HTTP 400, nothing runs). */
function refusedAs(describe: (found: number) => [message: string, extensions: Record<string, unknown>]) {
  return {
    exposeLimits: true,
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError): void => {
        const [message, extensions] = describe(foundIn(error));
        context?.reportError(new GraphQLError(message, { extensions }));
      },
    ],
  };
}

/** Depth counts fragments flattened; aliases and directives count an operation's fragments'. */
export function useDocumentLimits(limits: SettingsOf<typeof DOCUMENT_LIMIT_SETTINGS>): Plugin {
  const { tokens, depth, aliases, directives } = limits;
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        maxTokensPlugin({
          n: tokens,
          propagateOnRejection: false,
          // Thrown from the lexer: parsing stops at the first token past the limit (HTTP 400).
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
          ...refusedAs((found) => [
            `This operation nests fields ${found} deep; the limit is ${depth} (MAX_DEPTH). Select less deeply, or split it.`,
            { code: 'DEPTH_LIMIT_EXCEEDED' satisfies ErrorCode, depthLimit: depth, depth: found },
          ]),
        }),
      );
      addPlugin(
        maxAliasesPlugin({
          n: aliases,
          ...refusedAs((found) => [
            `This operation uses ${found} aliases; the limit is ${aliases} (MAX_ALIASES). Split it into several requests.`,
            { code: 'ALIAS_LIMIT_EXCEEDED' satisfies ErrorCode, aliasLimit: aliases, aliases: found },
          ]),
        }),
      );
      addPlugin(
        maxDirectivesPlugin({
          n: directives,
          ...refusedAs((found) => [
            `This operation uses ${found} directives; the limit is ${directives} (MAX_DIRECTIVES). Split it into several requests.`,
            { code: 'DIRECTIVE_LIMIT_EXCEEDED' satisfies ErrorCode, directiveLimit: directives, directives: found },
          ]),
        }),
      );
    },
  };
}
