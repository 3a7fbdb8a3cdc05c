// In-process yoga for plugin tests: a tiny schema, the plugins under test, requests through
// yoga.fetch (no socket, no upstream).
import { createSchema, createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { type GatewayServerContext, newRun } from '../../../src/graphql/context.js';
import { newRequestState } from '../../../src/request-state.js';
import type { GatewayContext, Usage } from '../../../src/schema/context.js';

/** What a resolver of the tiny schema did to the request's usage, as the real resolvers would. */
export interface TinyContext {
  usage: Usage;
}

const typeDefs = /* GraphQL */ `
  type Query {
    "Pretends to make two upstream calls, the install reporting its rate limit."
    calls: Int!
    hello(name: String): String!
  }
`;

export function tinyYoga(plugins: Plugin<GatewayContext, GatewayServerContext>[] | Plugin<GatewayContext>[] | Plugin[]) {
  return createYoga<GatewayServerContext, TinyContext>({
    schema: createSchema<TinyContext & YogaInitialContext & GatewayServerContext>({
      typeDefs,
      resolvers: {
        Query: {
          calls: (_root, _args, context) => {
            context.usage.upstreamCalls += 2;
            context.usage.rateLimit = { limit: 60, remaining: 57 };
            return 2;
          },
          hello: (_root, args: { name?: string | null }) => `hello ${args.name ?? 'you'}`,
        },
      },
    }),
    logging: false,
    context: (): TinyContext => ({
      usage: { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } },
    }),
    plugins: plugins as Plugin[],
  });
}

export async function post(
  yoga: ReturnType<typeof tinyYoga>,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  /** The server context, as the GraphQL layer hands it over (the request's state, as the HTTP layer makes it, and its run). */
  serverContext: GatewayServerContext = contextFor(headers.authorization),
): Promise<{
  response: Response;
  json: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[]; extensions?: Record<string, unknown> };
}> {
  const response = await yoga.fetch(
    'http://yoga.test/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    },
    serverContext,
  );
  return { response, json: (await response.json()) as Awaited<ReturnType<typeof post>>['json'] };
}

/** The server context of a request that sent `authorization`, made as the gateway makes it. */
export function contextFor(authorization?: string): GatewayServerContext {
  const state = newRequestState(authorization);
  return { state, run: newRun(state) };
}
