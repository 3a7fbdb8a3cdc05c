// A supergraph for the federation suite and the benchmark: the gateway's subgraph (FEDERATION=on)
// composed with a small billing subgraph whose invoices name a Website by its id, served by the real
// Hive Gateway, which forwards the caller's Authorization header as the README's configuration does.
import { createServer, type RequestListener, type Server } from 'node:http';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime, useCustomFetch, type GatewayRuntime } from '@graphql-hive/gateway';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { listenOn } from '../../src/http/listen.js';

/** The other subgraph: `invoices(websiteIds:, count:)` answers `count` invoices, the i-th naming `websiteIds[i % length]`. */
const BILLING_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
  type Invoice {
    id: ID!
    amountCents: Int!
    "The website billed: the analytics subgraph resolves it, null when the caller has no such website."
    website: Website
  }
  type Website @key(fields: "id", resolvable: false) {
    id: ID!
  }
  type Query {
    invoices(websiteIds: [ID!]!, count: Int!): [Invoice!]!
  }
`;

interface InvoicesArgs {
  websiteIds: string[];
  count: number;
}

const billingSchema = buildSubgraphSchema({
  typeDefs: parse(BILLING_SDL),
  resolvers: {
    Query: {
      invoices: (_root: unknown, { websiteIds, count }: InvoicesArgs) =>
        Array.from({ length: count }, (_, i) => ({
          id: `inv-${i + 1}`,
          amountCents: 1000 + i,
          website: { __typename: 'Website', id: websiteIds[i % websiteIds.length] },
        })),
    },
  },
});

export interface Supergraph {
  /** The router's GraphQL endpoint. */
  endpoint: string;
  /** The billing subgraph's. */
  billingEndpoint: string;
  /** Every URL the router fetched, in order: only the subgraphs' (it downloads nothing). */
  fetched: string[];
  /** The Authorization header of each request the billing subgraph received (null: none). */
  billingAuthorizations: (string | null)[];
  /** Closes the router and the billing subgraph (not the gateway). */
  close(): Promise<void>;
}

async function serve(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  return { server, url: await listenOn(server, '127.0.0.1', 0) };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The SDL a router composes, read from the subgraph as composition tools (rover, hive) do: `_service { sdl }`. */
export async function subgraphSdl(endpoint: string): Promise<string> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
  });
  const { data } = (await response.json()) as { data?: { _service?: { sdl?: string } } };
  const sdl = data?._service?.sdl;
  if (typeof sdl !== 'string') throw new Error(`${endpoint} answered no _service.sdl (FEDERATION=on?)`);
  return sdl;
}

/** Composes the gateway's subgraph (at `gatewayEndpoint`) with the billing subgraph and serves the supergraph with Hive Gateway. */
export async function startSupergraph(gatewayEndpoint: string): Promise<Supergraph> {
  const billingAuthorizations: (string | null)[] = [];
  const billingYoga = createYoga({
    schema: billingSchema,
    logging: false,
    graphiql: false,
    context: ({ request }) => void billingAuthorizations.push(request.headers.get('authorization')),
  });
  const billing = await serve(billingYoga);
  const billingEndpoint = `${billing.url}/graphql`;
  const composed = composeServices([
    { name: 'analytics', typeDefs: parse(await subgraphSdl(gatewayEndpoint)), url: gatewayEndpoint },
    { name: 'billing', typeDefs: parse(BILLING_SDL), url: billingEndpoint },
  ]);
  if (composed.errors) {
    await close(billing.server);
    throw new Error(`composition failed:\n${composed.errors.map((error) => error.message).join('\n')}`);
  }
  const fetched: string[] = [];
  // The README's configuration: the caller's Authorization header goes to the analytics subgraph, and to no other.
  const runtime: GatewayRuntime = createGatewayRuntime({
    supergraph: composed.supergraphSdl,
    logging: false,
    propagateHeaders: {
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        subgraphName === 'analytics' ? { authorization: request.headers.get('authorization') } : {},
    },
    plugins: () => [
      useCustomFetch((url, init) => {
        fetched.push(url);
        return fetch(url, init);
      }),
    ],
  });
  const router = await serve(runtime);
  return {
    endpoint: `${router.url}/graphql`,
    billingEndpoint,
    fetched,
    billingAuthorizations,
    async close() {
      await close(router.server);
      await runtime.dispose();
      await close(billing.server);
    },
  };
}
