// createGateway(config): the node:http server in front of yoga. Before GraphQL runs it applies the
// body limits, the receive timeout and admission control and answers `/` and `/health`; it listens
// and closes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../config.js';
import { SECURITY_HEADERS } from '../graphql/plugins/use-security-headers.js';
import { GRAPHQL_ENDPOINT, createGatewayYoga } from '../graphql/yoga.js';
import { createUpstreamClient } from '../upstream/client.js';
import { NO_CACHE, createResponseCache, type ResponseCache } from '../upstream/cache.js';
import type { DocumentRegistry } from '../graphql/persisted-queries.js';
import { MemoryCacheStore, RedisCacheStore } from '../upstream/cache-store.js';
import { createStatNames } from '../upstream/dialect.js';
import { createAdmission } from './admission.js';
import { OVERLOADED, bodyRefusal, bodyTooLarge, rawRefusal, receivedTooSlowly, refuse } from './refusals.js';

export interface GatewayOptions {
  /** undici dispatcher for the upstream (tests inject a MockAgent). */
  dispatcher?: Dispatcher;
  /** Key prefilled in GraphiQL's headers (sandbox mode only). */
  demoKey?: string;
  /** Where request log lines go; default: pino to stdout at config.logLevel. */
  logger?: Logger;
  /** The clock of the cache and of periods (tests pin "today" with it); default Date.now. */
  now?: () => number;
}

export interface Gateway {
  /** Base URL, e.g. http://127.0.0.1:4000; GraphQL is at `${url}/graphql`. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  if (config.upstream.url === null) throw new Error('createGateway needs config.upstream.url');
  const client = createUpstreamClient({
    ...config.upstream,
    url: config.upstream.url,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const logger = options.logger ?? pino({ level: config.logLevel, base: null });
  const { cache, documentRegistry } = createCache(config, logger, options.now);
  const clock = { now: options.now ?? Date.now, timeZone: config.upstreamTimeZone };
  const upstream = { client, statNames: createStatNames(config.upstream.statNames), cache, clock };
  const yoga = createGatewayYoga(config, {
    upstream,
    logger,
    ...(documentRegistry ? { documentRegistry } : {}),
    graphiql: options.demoKey ? { demoKey: options.demoKey } : {},
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
      refuse(req, res, OVERLOADED, config);
    },
  });
  const handle = (req: IncomingMessage, res: ServerResponse): void => void yoga(req, res);

  // A request takes a place in line (and later a slot) only once its body is here: a client that
  // sends slowly holds its own socket, never one of the MAX_ACTIVE_REQUESTS slots. node cuts a
  // request whose headers and body have not all arrived within the receive timeout (408); a request
  // whose body is complete is out of node's reach, so its wait in line is not counted against it.
  // node checks every connectionsCheckingInterval, so the cut comes within a second of the timeout.
  const receiveTimeoutMs = config.receiveTimeoutMs;
  const server = createServer({
    headersTimeout: receiveTimeoutMs,
    requestTimeout: receiveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, receiveTimeoutMs),
  });
  // The response in flight on each connection: the 408 of a request whose body is late goes through
  // it, with CORS and the security headers, as the gateway's other refusals do.
  const responses = new WeakMap<Duplex, ServerResponse>();
  // The body cap is enforced before anything is buffered, so an oversized body never is. The
  // health check skips the line: it says the process is alive, however busy.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    responses.set(req.socket, res);
    const refusal = bodyRefusal(req, config.limits.bodyBytes);
    if (refusal) refuse(req, res, refusal, config);
    else if (req.url === '/' && (req.method === 'GET' || req.method === 'HEAD')) redirectToGraphQL(res);
    else if (req.url === '/health') handle(req, res);
    else {
      readBody(req, res, config.limits.bodyBytes, {
        read: () => admission.admit(req, res, handle),
        tooLarge: () => refuse(req, res, bodyTooLarge(config.limits.bodyBytes), config),
      });
    }
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    const res = responses.get(socket);
    // As node does by default: never write over a response whose headers are already out.
    const answering = res !== undefined && !res.writableFinished;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && answering && !res.headersSent) {
      refuse(res.req, res, receivedTooSlowly(receiveTimeoutMs), config); // closes the connection once written
      return;
    }
    if (socket.writable && !(answering && res.headersSent)) socket.write(clientErrorAnswer(error.code, receiveTimeoutMs));
    socket.destroy(error);
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
      await upstream.cache.close();
    },
  };
}

/** The read cache as configured (off, in this process's memory, or in Redis), and Redis's home for APQ. */
function createCache(
  config: Config,
  logger: Logger,
  now: (() => number) | undefined,
): { cache: ResponseCache; documentRegistry?: DocumentRegistry } {
  const { cache } = config;
  // One warn line per failing store operation kind at most every 10 s: the log says the store is
  // failing without a line per request.
  const lastWarned = new Map<string, number>();
  const onStoreError = (operation: string, error: unknown): void => {
    const at = Date.now();
    if ((lastWarned.get(operation) ?? 0) > at - 10_000) return;
    lastWarned.set(operation, at);
    logger.warn({ operation, error: error instanceof Error ? error.message : String(error) }, 'cache store failed: reading from the upstream');
  };
  const redis = cache.redisUrl === null ? null : new RedisCacheStore(cache.redisUrl, cache.storeTimeoutMs, now);
  // APQ in Redis: bounded as in memory (APQ_MAX_ENTRIES, APQ_MAX_BYTES) but for all gateways together,
  // apart from the cache's records, and forgotten APQ_REDIS_TTL_S after their last use.
  const { persistedQueries: pq } = config;
  const bound = { maxEntries: pq.maxEntries, maxBytes: pq.maxBytes, lifetimeMs: pq.redisTtlMs };
  const documentRegistry: DocumentRegistry | undefined = redis
    ? {
        get: async (hash) => (await redis.document(hash, bound).catch((error: unknown) => onStoreError('apq get', error))) ?? undefined,
        set: async (hash, document) => {
          await redis.keepDocument(hash, document, bound).catch((error: unknown) => onStoreError('apq set', error));
        },
      }
    : undefined;
  if (!cache.enabled) {
    return { cache: { ...NO_CACHE, close: async () => redis?.close() }, ...(documentRegistry ? { documentRegistry } : {}) };
  }
  const responseCache = createResponseCache({
    store: redis ?? new MemoryCacheStore(cache.maxBytes, now),
    settledMs: cache.settledS * 1000,
    recentMs: cache.recentS * 1000,
    maxStaleMs: cache.maxStaleS * 1000,
    keyRecheckMs: cache.keyRecheckS * 1000,
    timeZone: config.upstreamTimeZone,
    ...(now ? { now } : {}),
    onStoreError,
    // The memory store answers at once; Redis gets the whole request's budget.
    ...(redis ? { storeBudgetMs: cache.storeTimeoutMs } : {}),
  });
  return { cache: responseCache, ...(documentRegistry ? { documentRegistry } : {}) };
}

/**
 * Reads the whole body (the 411/413 checks above bound what a POST declares; `limit` bounds any
 * other method's) and hands it to yoga in `req.body`, which @whatwg-node/server uses instead of the
 * stream when it is a non-empty Uint8Array. Nothing is called when the client leaves first.
 */
function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  then: { read(): void; tooLarge(): void },
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else {
      req.off('data', onData).off('end', onEnd);
      then.tooLarge();
    }
  };
  const onEnd = (): void => {
    if (res.headersSent) return; // refused meanwhile (408)
    if (size > 0) Object.assign(req, { body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) });
    then.read();
  };
  req.on('data', onData).once('end', onEnd);
}

/**
 * What node answers a client error by default (a request that does not parse, headers too large),
 * since a 'clientError' listener replaces it; a request late with its headers gets the gateway's 408.
 */
function clientErrorAnswer(code: string | undefined, receiveTimeoutMs: number): string {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawRefusal(receivedTooSlowly(receiveTimeoutMs));
    case 'HPE_HEADER_OVERFLOW':
      return 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n';
    default:
      return 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
  }
}

/** The root has nothing of its own: a browser that opens it lands on GraphiQL. */
function redirectToGraphQL(res: ServerResponse): void {
  res.writeHead(302, { location: GRAPHQL_ENDPOINT, 'content-length': '0', ...SECURITY_HEADERS });
  res.end();
}
