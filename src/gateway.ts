// The composition root: createGateway(config) builds the upstream client, what the gateway learns of
// the install (the statistics' names), the stores (this process's memory or Redis), the read cache, the
// clock and yoga, and puts the HTTP server (http/server.ts) in front of them. Nothing else builds them.
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from './config.js';
import type { DocumentRegistry } from './graphql/plugins/use-persisted-queries.js';
import { createGatewayYoga } from './graphql/yoga.js';
import { serveHttp } from './http/server.js';
import { NO_CACHE, createResponseCache, type ResponseCache } from './upstream/cache.js';
import { MemoryCacheStore, RedisCacheStore } from './upstream/cache-store.js';
import { createUpstreamClient } from './upstream/client.js';
import { createStatNames } from './upstream/dialect.js';

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
  const http = await serveHttp((req, res) => void yoga(req, res), config, logger);
  return {
    url: http.url,
    server: http.server,
    async close() {
      await http.close();
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
    logger.warn(
      { operation, error: error instanceof Error ? error.message : String(error) },
      'cache store failed: reading from the upstream',
    );
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
    settledMs: cache.settledMs,
    recentMs: cache.recentMs,
    maxStaleMs: cache.maxStaleMs,
    keyRecheckMs: cache.keyRecheckMs,
    ...(now ? { now } : {}),
    onStoreError,
    // The memory store answers at once; Redis gets the whole request's budget.
    ...(redis ? { storeBudgetMs: cache.storeTimeoutMs } : {}),
  });
  return { cache: responseCache, ...(documentRegistry ? { documentRegistry } : {}) };
}
