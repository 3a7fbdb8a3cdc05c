// createGateway(config): yoga with our schema and plugins, served by a node:http server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import type { Dispatcher } from 'undici';
import type { Config } from './config.js';
import { createContext, type GatewayContext } from './context.js';
import { costExtensions, costLimit } from './plugins.js';
import { schema } from './schema/index.js';
import { createUpstreamClient } from './upstream/client.js';

export interface GatewayOptions {
  /** undici dispatcher for the upstream (tests inject a MockAgent). */
  dispatcher?: Dispatcher;
  /** Key prefilled in GraphiQL's headers (sandbox mode only). */
  demoKey?: string;
  /** "Today" of the example query's date range, YYYY-MM-DD. */
  today?: string;
}

export interface Gateway {
  /** Base URL, e.g. http://127.0.0.1:4000; GraphQL is at `${url}/graphql`. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The query GraphiQL opens on: one website with several statistics, in one request. */
export function exampleQuery(today: string): string {
  const to = new Date(`${today}T00:00:00Z`);
  const from = new Date(to.getTime() - 29 * 86_400_000);
  const range = `from: "${isoDay(from)}", to: "${isoDay(to)}"`;
  return `# The dashboard: a website and five statistics of the last 30 days, in one request.
query Dashboard {
  website(id: "1") {
    domain
    privacy
    visitors: stats(name: VISITOR, ${range}, sortBy: VALUE, sort: ASC, perPage: 50) {
      nodes { value count }
    }
    pages: stats(name: PAGE, ${range}) { nodes { value count } totalCount }
    countries: stats(name: COUNTRY, ${range}) { nodes { value count } }
    browsers: stats(name: BROWSER, ${range}, perPage: 25) { nodes { value count } }
    referrers: stats(name: REFERRER, ${range}) { nodes { value count } pageInfo { hasNextPage } }
  }
}
`;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  if (config.upstream.url === null) throw new Error('createGateway needs config.upstream.url');
  const client = createUpstreamClient({
    ...config.upstream,
    url: config.upstream.url,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });

  const graphiql: GraphiQLOptions = {
    title: 'Analytics GraphQL gateway',
    defaultQuery: exampleQuery(options.today ?? isoDay(new Date())),
    ...(options.demoKey ? { headers: JSON.stringify({ Authorization: `Bearer ${options.demoKey}` }) } : {}),
  };
  // The GraphiQL bundle is ~9 MB of inlined JavaScript: render it once, not per page view.
  let graphiqlPage: string | undefined;

  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    maskedErrors: { isDev: !config.production },
    graphiql: config.graphiql ? graphiql : false,
    renderGraphiQL: (opts) => (graphiqlPage ??= renderGraphiQL(opts)),
    context: ({ request }) => createContext(request, client, config),
    plugins: [
      costExtensions(config.maxCost),
      costLimit(config.maxCost),
      ...(config.introspection ? [] : [useDisableIntrospection()]),
    ],
  });

  const server = createServer(yoga);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  return {
    url: `http://${host}:${port}`,
    server,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await client.close();
    },
  };
}
