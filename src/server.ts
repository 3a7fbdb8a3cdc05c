// createGateway(config): yoga with our schema and plugins, served by a node:http server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import { pino, type Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { createAdmission } from './admission.js';
import type { Config } from './config.js';
import { createContext, type GatewayContext } from './context.js';
import { SECURITY_HEADERS, costExtensions, costLimit, requestLog, securityHeaders } from './plugins.js';
import { schema } from './schema/index.js';
import { createUpstreamClient } from './upstream/client.js';
import { createStatNames } from './upstream/dialect.js';

export interface GatewayOptions {
  /** undici dispatcher for the upstream (tests inject a MockAgent). */
  dispatcher?: Dispatcher;
  /** Key prefilled in GraphiQL's headers (sandbox mode only). */
  demoKey?: string;
  /** "Today" of the example query's date range, YYYY-MM-DD. */
  today?: string;
  /** Where request log lines go; default: pino to stdout at config.logLevel. */
  logger?: Logger;
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

interface Refusal {
  status: number;
  message: string;
  code: 'BAD_USER_INPUT' | 'OVERLOADED';
}

const OVERLOADED: Refusal = { status: 503, message: 'The gateway is busy; retry in a moment.', code: 'OVERLOADED' };

function bodyRefusal(req: IncomingMessage, limit: number): Refusal | null {
  if (req.method !== 'POST') return null;
  const length = req.headers['content-length'];
  if (length === undefined) {
    return req.headers['transfer-encoding']
      ? { status: 411, message: 'Send the request body with a Content-Length header.', code: 'BAD_USER_INPUT' }
      : null;
  }
  return Number(length) > limit
    ? { status: 413, message: `The request body is larger than the ${limit}-byte limit.`, code: 'BAD_USER_INPUT' }
    : null;
}

/**
 * Answers before yoga sees the request (body limits, admission control), with the headers yoga's
 * answers carry: the security headers, and CORS for an allowed origin so a browser app can read the
 * error (and Retry-After) instead of seeing a network failure.
 */
function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal, corsOrigins: readonly string[]): void {
  if (res.destroyed) return;
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    connection: 'close',
    ...SECURITY_HEADERS,
  };
  if (refusal.code === 'OVERLOADED') headers['retry-after'] = '1';
  const origin = req.headers.origin;
  if (origin !== undefined && (corsOrigins.includes('*') || corsOrigins.includes(origin))) {
    headers['access-control-allow-origin'] = corsOrigins.includes('*') ? '*' : origin;
    headers['access-control-expose-headers'] = 'retry-after';
    headers.vary = 'Origin';
  }
  res.writeHead(refusal.status, headers);
  res.end(JSON.stringify({ errors: [{ message: refusal.message, extensions: { code: refusal.code } }] }));
  // Read and drop what the client is still sending, so it gets to read this answer.
  req.resume();
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  if (config.upstream.url === null) throw new Error('createGateway needs config.upstream.url');
  const client = createUpstreamClient({
    ...config.upstream,
    url: config.upstream.url,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const upstream = { client, statNames: createStatNames(config.upstream.statNames) };

  const graphiql: GraphiQLOptions = {
    title: 'Analytics GraphQL gateway',
    defaultQuery: exampleQuery(options.today ?? isoDay(new Date())),
    ...(options.demoKey ? { headers: JSON.stringify({ Authorization: `Bearer ${options.demoKey}` }) } : {}),
  };
  // The GraphiQL bundle is ~9 MB of inlined JavaScript (~47 MB of RSS once loaded): load it on the
  // first page view, not at start-up, and render it once.
  let graphiqlPage: Promise<string> | undefined;
  const renderPage = (opts: GraphiQLOptions): Promise<string> =>
    (graphiqlPage ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => renderGraphiQL(opts)));

  const logger = options.logger ?? pino({ level: config.logLevel, base: null });
  const contexts = new WeakMap<Request, GatewayContext>();
  const { limits } = config;

  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    batching: false,
    maskedErrors: { isDev: !config.production },
    graphiql: config.graphiql ? graphiql : false,
    renderGraphiQL: renderPage,
    cors:
      config.corsOrigins.length === 0
        ? false
        : {
            origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
            methods: ['GET', 'POST'],
            allowedHeaders: ['authorization', 'content-type', 'x-graphql-yoga-csrf'],
            credentials: false,
            maxAge: 600,
          },
    context: ({ request }) => {
      const context = createContext(request, upstream, config);
      contexts.set(request, context);
      return context;
    },
    plugins: [
      useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf'] }),
      maxTokensPlugin({ n: limits.tokens }),
      // Introspection counts too: the schema has no cycles, so it is the only way to nest deeply.
      maxDepthPlugin({ n: limits.depth, flattenFragments: true, ignoreIntrospection: false }),
      maxAliasesPlugin({ n: limits.aliases }),
      maxDirectivesPlugin({ n: limits.directives }),
      ...(config.introspection ? [] : [useDisableIntrospection()]),
      costExtensions(config.maxCost),
      costLimit(config.maxCost),
      securityHeaders(),
      requestLog((line) => logger.info(line, 'graphql request'), (request) => contexts.get(request)),
    ],
  });

  const admission = createAdmission({
    maxActive: config.maxActiveRequests,
    maxQueued: config.maxQueuedRequests,
    maxWaitMs: config.requestDeadlineMs,
    reject: (req, res, reason) => {
      // Operators need to see the gateway shedding load: one line per refused request.
      logger.warn(
        { status: 503, reason: reason === 'full' ? 'line full' : 'waited too long', active: admission.active, queued: admission.queued },
        'request refused: overloaded',
      );
      refuse(req, res, OVERLOADED, config.corsOrigins);
    },
  });
  const handle = (req: IncomingMessage, res: ServerResponse): void => void yoga(req, res);

  // The body cap is enforced before yoga reads anything, so an oversized body is never buffered.
  // The health check skips the line: it says the process is alive, however busy.
  const server = createServer((req, res) => {
    const refusal = bodyRefusal(req, limits.bodyBytes);
    if (refusal) refuse(req, res, refusal, config.corsOrigins);
    else if (req.url === '/health') handle(req, res);
    else admission.admit(req, res, handle);
  });
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
