// Our own yoga plugins: the upstream-cost limit, and the figures every response carries.
import { GraphQLError, Kind, getOperationAST, getVariableValues, type FragmentDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from './context.js';
import { operationCost } from './cost.js';

/**
 * Refuses, before any resolver runs, an operation that could make more upstream calls than `limit`.
 * It runs at execution rather than validation because page sizes may come from variables.
 */
export function costLimit(limit: number): Plugin<GatewayContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return;
      const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
      // Bad variables: execution refuses them itself, with no resolver run and no upstream call.
      if (coerced.errors) return;
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const definition of args.document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
      }
      const cost = operationCost(args.schema, operation, fragments, coerced.coerced);
      args.contextValue.usage.cost = cost;
      if (cost > limit) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `This operation could make ${cost} calls to the analytics service; the limit is ${limit}. ` +
                'Ask for fewer or smaller pages, or split it into several requests.',
              { extensions: { code: 'BAD_USER_INPUT', cost, costLimit: limit } },
            ),
          ],
          extensions: { cost: { requested: cost, limit }, upstreamCalls: 0 },
        });
      }
    },
  };
}

/** Puts the operation's cost, the upstream calls it made and the key's rate limit in the response's `extensions`. */
export function costExtensions(limit: number): Plugin<GatewayContext> {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (Symbol.asyncIterator in result) return;
        setResult({
          ...result,
          extensions: {
            ...result.extensions,
            cost: { requested: args.contextValue.usage.cost, limit },
            upstreamCalls: args.contextValue.usage.upstreamCalls,
            // The install's own word on the key's limit, so a frontend can slow down before a 429.
            ...(args.contextValue.usage.rateLimit ? { rateLimit: args.contextValue.usage.rateLimit } : {}),
          },
        });
      },
    }),
  };
}

/**
 * Headers for every response, and a strict policy for the GraphiQL page: it runs only its own
 * inline code and talks only to this origin.
 */
/** On every response, yoga's and those the server gives before yoga runs (src/server.ts). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

export function securityHeaders(): Plugin {
  return {
    onResponse({ response }) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
      if (response.headers.get('content-type')?.includes('text/html')) {
        response.headers.set('x-frame-options', 'DENY');
        response.headers.set(
          'content-security-policy',
          "default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
            "img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; " +
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        );
      }
    },
  };
}

export interface RequestLogLine {
  operation: string | null;
  durationMs: number;
  upstreamCalls: number;
  cost: number | null;
  outcome: 'ok' | 'error';
  errorCodes?: string[];
}

/**
 * One log line per GraphQL request: operation name, duration, upstream calls, outcome. Built from
 * an allow-list of fields, so headers (the key) and variables (passwords) can never reach it.
 */
export function requestLog(
  write: (line: RequestLogLine) => void,
  contextOf: (request: Request) => GatewayContext | undefined,
): Plugin {
  const started = new WeakMap<Request, { at: number; operation: string | null }>();
  return {
    onRequest({ request }) {
      started.set(request, { at: performance.now(), operation: null });
    },
    onParams({ request, params }) {
      const entry = started.get(request);
      if (entry && typeof params.operationName === 'string') entry.operation = params.operationName.slice(0, 100);
    },
    onResultProcess({ request, result }) {
      const entry = started.get(request);
      if (!entry) return;
      started.delete(request);
      const results = Array.isArray(result) ? result : [result];
      const codes = results.flatMap((r) =>
        'errors' in r && r.errors ? r.errors.map((e) => String(e.extensions?.code ?? 'GRAPHQL_ERROR')) : [],
      );
      const context = contextOf(request);
      write({
        operation: entry.operation,
        durationMs: Math.round((performance.now() - entry.at) * 100) / 100,
        upstreamCalls: context?.usage.upstreamCalls ?? 0,
        cost: context?.usage.cost ?? null,
        outcome: codes.length === 0 ? 'ok' : 'error',
        ...(codes.length > 0 ? { errorCodes: [...new Set(codes)] } : {}),
      });
    },
  };
}
