// The composition root: createGateway(config) builds the upstream client, the stores, the read cache, the
// clock and yoga, and puts the HTTP server in front of them. Nothing else builds them.
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type StdoutLog, stdoutLogger } from './log.js';
import type { Dispatcher } from 'undici';
import type { Config } from './config.js';
import type { DocumentRegistry } from './graphql/plugins/use-persisted-queries.js';
import { createGatewayYoga } from './graphql/yoga.js';
import { corsAnswerHeaders, isAllowedOrigin } from './graphql/cors.js';
import { GRAPHQL_ENDPOINT, TOOL_HEADER } from './http-headers.js';
import { RequestLog } from './http/request-log.js';
import { tracesAllowed } from './graphql/plugins/use-request-trace.js';
import { createStoredAnswers, type StoredAnswers, type Looked } from './cache/stored-answers.js';
import type { Answer } from './graphql/answered.js';
import { DURATION_BUCKETS_S, createGatewayMetrics, reportToPrimary, serveMetrics, type GatewayMetrics } from './http/metrics-listener.js';
import { createAnswerMetrics } from './http/answer-metrics.js';
import { type AnswerCounter, createEnding, storedAnswerOf } from './http/answer.js';
import { type Answerer, serveHttp } from './http/server.js';
import { recordCacheRead, traceStoredAnswer, traceUpstreamCall } from './tracing.js';
import { createLiveHub } from './live/hub.js';
import { RedisLiveShare } from './live/redis-share.js';
import { NO_CACHE, createReadCache, type ReadCache } from './cache/read-cache.js';
import type { CacheStore } from './cache/store.js';
import { MemoryCacheStore } from './cache/memory-store.js';
import { RedisCacheStore } from './cache/redis-store.js';
import { UnsettledWrites } from './cache/unsettled.js';
import { safeStore } from './cache/waiting.js';
import { createUpstreamClient } from './upstream/client.js';
import { evictsKeysWithoutExpiry } from './cache/redis-connection.js';
import { createStatNames } from './upstream/dialect.js';
import { schema } from './schema/index.js';
import { type Loopback, createLoopback } from './http/loopback.js';
import { MCP_ENDPOINT, createMcpHttpHandler } from './mcp/http.js';
import type { McpService, RunOperation } from './mcp/server.js';
import { createMcpService, type McpSetup } from './mcp/service.js';
import type { OperationOutcome } from './mcp/results.js';

export interface GatewayOptions {
  /** Tests inject a MockAgent. */
  dispatcher?: Dispatcher;
  /** Prefilled in GraphiQL's headers (sandbox mode only). */
  demoKey?: string;
  /** Default: pino to stdout at config.logLevel. */
  logger?: Logger;
  /** A worker's: the primary serves METRICS_PORT for all workers. */
  metricsToPrimary?: boolean;
  /** Of the cache and of periods (tests pin "today" with it). */
  now?: () => number;
}

export interface Gateway {
  /** Base URL, e.g. http://127.0.0.1:4000. */
  url: string;
  server: Server;
  /** The metrics listener's base URL; null when off. */
  metricsUrl: string | null;
  /** Stops without losing a request (http/drain.ts), then closes the upstream pool and the store. */
  drain(): Promise<void>;
  /** Called once, when drain starts: what must end before the gateway stops (long-lived answers) ends here. */
  onDraining(listener: () => void): void;
  /** Ends every connection at once, then closes the upstream pool and the store. */
  close(): Promise<void>;
  /** null with MCP=off. */
  mcp: McpService | null;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  if (config.upstream.url === null) throw new Error('createGateway needs config.upstream.url');
  const metrics = config.metrics ? createGatewayMetrics() : null;
  const { logger, stopLog, lines }: StdoutLog = options.logger
    ? { logger: options.logger, stopLog: () => undefined }
    : stdoutLogger(config.logLevel);
  const client = createUpstreamClient({
    ...config.upstream,
    url: config.upstream.url,
    dispatcher: options.dispatcher,
    ...(metrics
      ? {
          onAttemptDone: (request, route, status, seconds) => metrics.upstreamAttempt(request.method, route, status, seconds),
          onBreakerChange: metrics.breakerOpen,
        }
      : {}),
    ...(config.tracing ? { traceCall: traceUpstreamCall } : {}),
    // One line per failed attempt, naming its cause: a wrong UPSTREAM_URL or a failing install shows at once.
    onAttemptFailed: (failure) => logger.warn(failure, 'upstream call failed'),
  });
  const { cache, store, documentRegistry, storeConnection, onStoreError, keySecret, unsettled, etagSecret } = createCache(
    config,
    logger,
    options.now,
    metrics,
  );
  const clock = { now: options.now ?? Date.now, timeZone: config.upstreamTimeZone };
  const answers: StoredAnswers | undefined = store
    ? createStoredAnswers({
        store,
        settledMs: config.cache.settledMs,
        maxStaleMs: config.cache.maxStaleMs,
        clock,
        endpoint: GRAPHQL_ENDPOINT,
        onStoreError,
        // The memory store answers at once; Redis gets the whole request's budget, shared with the read cache.
        ...(config.cache.redisUrl === null ? {} : { storeBudgetMs: config.cache.storeTimeoutMs }),
        ...(metrics ? { onStored: () => metrics.storedAnswer('stored') } : {}),
        ...(unsettled ? { owes: (authorization: string) => unsettled.owes(authorization) } : {}),
      })
    : undefined;
  // None below LOG_LEVEL=info: its lines would be built for nothing.
  const requestLog = logger.isLevelEnabled('info') ? new RequestLog(logger, lines) : undefined;
  const graphqlMetrics =
    metrics && config.metrics
      ? createAnswerMetrics({ registry: metrics.registry, buckets: DURATION_BUCKETS_S, maxOperations: config.metrics.maxOperations })
      : undefined;
  const counter: AnswerCounter | undefined =
    metrics && graphqlMetrics
      ? {
          answered(facts, seconds, stored) {
            if (stored) metrics.storedAnswer('sent');
            graphqlMetrics.answered(facts, seconds, stored);
          },
        }
      : undefined;
  const ending = createEnding({
    cors: (origin) => (isAllowedOrigin(origin, config) ? corsAnswerHeaders(origin) : []),
    etagSecret,
    ...(answers ? { keep: answers.keep } : {}),
    costLimit: config.maxCost,
    ...(counter ? { counter } : {}),
    ...(requestLog ? { log: requestLog } : {}),
    ...(config.tracing ? { traceStored: traceStoredAnswer } : {}),
  });
  const upstream = { client, statNames: createStatNames(config.upstream.statNames), cache, clock };
  const live = createLiveHub({
    ...config.live,
    ...(keySecret ? { keySecret } : {}),
    ...(config.cache.redisUrl === null
      ? {}
      : { share: new RedisLiveShare(config.cache.redisUrl, config.cache.storeTimeoutMs, onStoreError), onShareError: onStoreError }),
  });
  let listening = '';
  const loopback = createLoopback(() => listening);
  const mcp: McpSetup | null = config.mcp.enabled ? createMcpService(schema, config.mcp, runThrough(loopback)) : null;
  const graphql = createGatewayYoga(config, {
    ...(mcp ? { trustedDocuments: mcp.documents } : {}),
    upstream,
    live,
    documentRegistry,
    graphiql: options.demoKey ? { demoKey: options.demoKey } : {},
    polled: (state, answer) => {
      if ('body' in answer) ending.settle(null, state, answer);
    },
    ...(requestLog ? { onFault: (error: unknown) => requestLog.fault(error) } : {}),
  });
  // GraphQL's read cache goes on with the store's part of the request the lookup left.
  const answer: Answerer = answers
    ? (req, res, state) => {
        const fromGraphQL = (looked: Looked): Answer | Promise<Answer> => {
          state.store = looked.session;
          return looked.hit === undefined ? graphql.answer(req, res, state) : storedAnswerOf(looked.hit, state);
        };
        const looked = answers.lookUp(req, state.key);
        return looked instanceof Promise ? looked.then(fromGraphQL) : fromGraphQL(looked);
      }
    : (req, res, state) => graphql.answer(req, res, state);
  const http = await serveHttp(
    answer,
    ending,
    {
      ...config,
      knownKeyMs: config.cache.keyRecheckMs,
      traces: tracesAllowed(config),
      ...(mcp
        ? {
            mcpEndpoint: {
              path: MCP_ENDPOINT,
              handle: createMcpHttpHandler(mcp.service, {
                allowedOrigin: (origin) => isAllowedOrigin(origin, config),
                maxBodyBytes: config.limits.bodyBytes,
              }),
            },
          }
        : {}),
    },
    logger,
    () => ({
      upstreamBreaker: client.breakerState(),
      store: storeConnection(),
    }),
    metrics ? (reason) => metrics.refused(reason === 'full' ? 'queue_full' : 'queue_timeout') : undefined,
  );
  listening = http.url;
  metrics?.observeAdmission(http.load);
  metrics?.observeLive(() => ({ streams: live.streams, topics: live.pollers }));
  const metricsListener =
    metrics && config.metrics && !options.metricsToPrimary ? await serveMetrics(metrics.registry, config.metrics) : null;
  if (metrics && options.metricsToPrimary) reportToPrimary(metrics.registry);
  // On drain, the HTTP server closes open event streams (http/server.ts), so that their clients
  // resubscribe to another replica; the pollers stop with the last stream that leaves.
  const drainingListeners: (() => void)[] = [];
  let stopped: Promise<void> | undefined;
  const closeBehind = async (closeHttp: () => Promise<void>): Promise<void> => {
    await closeHttp();
    await loopback.close();
    await live.close();
    await client.close();
    await upstream.cache.close();
    await metricsListener?.close();
    stopLog();
  };
  return {
    url: http.url,
    server: http.server,
    metricsUrl: metricsListener?.url ?? null,
    mcp: mcp?.service ?? null,
    onDraining: (listener) => void drainingListeners.push(listener),
    drain() {
      if (stopped) return stopped;
      const draining = http.drain();
      for (const listener of drainingListeners.splice(0)) listener();
      stopped = closeBehind(() => draining);
      return stopped;
    },
    close() {
      stopped ??= closeBehind(() => http.close());
      return stopped;
    },
  };
}

/** An MCP tool call: a GraphQL request to this gateway's own port, its document by hash (trusted). */
function runThrough(loopback: Loopback): RunOperation {
  return async ({ documentHash, operationName, variables, authorization, toolName, traceContext, signal }) => {
    const answer = await loopback.post(
      { operationName, variables, extensions: { persistedQuery: { version: 1, sha256Hash: documentHash } } },
      { ...traceContext, authorization, [TOOL_HEADER]: toolName },
      signal,
    );
    const result = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as OperationOutcome['result'];
    return {
      status: answer.status,
      result,
      ...(answer.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: answer.retryAfterSeconds }),
    };
  };
}

function cacheReadReport(metrics: GatewayMetrics | null, tracing: boolean): (result: 'hit' | 'miss' | 'stale') => void {
  if (metrics && tracing) {
    return (result) => {
      metrics.cacheRead(result);
      recordCacheRead(result);
    };
  }
  return metrics ? metrics.cacheRead : recordCacheRead;
}

const REDIS_START_WAIT_MS = 5_000;

/** One line when Redis is not usable at start, or its maxmemory-policy evicts keys that must stay (docs/caching.md). */
function checkRedisAtStart(redis: RedisCacheStore, logger: Logger): void {
  redis.evictionPolicies(REDIS_START_WAIT_MS).then(
    (policies) => {
      const evicting = policies.find(evictsKeysWithoutExpiry);
      logger.debug({ maxmemoryPolicy: evicting ?? policies[0] }, "Redis's maxmemory-policy read");
      if (evicting === undefined) return;
      logger.warn(
        { maxmemoryPolicy: evicting },
        `Redis's maxmemory-policy ${evicting} evicts keys that have no expiry: when Redis is full it drops the gateways' shared secret and the counters that put a key's entries out of reach; set maxmemory-policy volatile-lru`,
      );
    },
    (error: unknown) => {
      if (redis.connection === 'end') return; // closed meanwhile
      const message = error instanceof Error ? error.message : String(error);
      // An ACL user without INFO: the store works, its policy is the operator's to check.
      if (message.startsWith('NOPERM')) logger.info({ error: message }, "Redis's maxmemory-policy not read: it should be volatile-lru");
      else logger.warn({ error: message, store: redis.connection }, 'Redis not usable at start: reading from the upstream until it is');
    },
  );
}

/** One line when Redis is lost, one when it is back: a gateway with no store call in flight says nothing else. */
function logConnection(redis: RedisCacheStore, logger: Logger): void {
  let state: 'starting' | 'up' | 'lost' = 'starting';
  redis.onConnection((event) => {
    // `end`: closed by the gateway, as it stops.
    if (event === 'lost' && state !== 'lost' && !redis.connection.startsWith('end')) {
      if (state === 'up') logger.warn({ store: redis.connection }, 'Redis lost: reading from the upstream until it is back');
      state = 'lost';
    } else if (event === 'ready' && state !== 'up') {
      if (state === 'lost') logger.info({ store: redis.connection }, 'Redis back: the store is used again');
      state = 'up';
    }
  });
}

/** The read cache as configured (off, in memory, or in Redis), and Redis's home for APQ. */
function createCache(
  config: Config,
  logger: Logger,
  now: (() => number) | undefined,
  metrics: GatewayMetrics | null,
): {
  cache: ReadCache;
  /** None with CACHE=off. */
  store?: CacheStore;
  documentRegistry?: DocumentRegistry;
  storeConnection: () => string;
  onStoreError: (operation: string, error: unknown) => void;
  /** With Redis: what every gateway on it hashes keys with (so that they name a key's topics alike). */
  keySecret?: () => Promise<string>;
  unsettled?: UnsettledWrites;
  /** With Redis, Redis's once read, never waited for (until then, at worst a 200 where a 304 could be). */
  etagSecret: () => string;
} {
  const { cache } = config;
  // One warn line per failing operation kind at most every 10 s, not a line per request.
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
  if (redis) {
    checkRedisAtStart(redis, logger);
    logConnection(redis, logger);
  }
  // What /ready reports of the store (with Redis, why the credentials were refused).
  const storeConnection = (): string => (redis ? `redis ${redis.connection}` : cache.enabled ? 'memory' : 'off');
  const processSecret = randomBytes(32).toString('hex');
  const shared = {
    storeConnection,
    onStoreError,
    etagSecret: redis ? () => redis.known ?? processSecret : () => processSecret,
    ...(redis ? { keySecret: () => redis.secret() } : {}),
  };
  // APQ in Redis: bounded as in memory but for all gateways together, forgotten APQ_REDIS_TTL_S after use.
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
    return {
      cache: { ...NO_CACHE, close: async () => redis?.close() },
      ...shared,
      documentRegistry,
    };
  }
  const store = redis ?? new MemoryCacheStore(cache.maxBytes, now);
  // The memory store always takes a write's invalidation; Redis may not (cut, paused, slow, full).
  const unsettled = redis ? new UnsettledWrites(redis, safeStore(onStoreError), cache.settledMs + cache.maxStaleMs) : undefined;
  const responseCache = createReadCache({
    store,
    settledMs: cache.settledMs,
    recentMs: cache.recentMs,
    maxStaleMs: cache.maxStaleMs,
    keyRecheckMs: cache.keyRecheckMs,
    ...(now ? { now } : {}),
    onStoreError,
    ...(metrics || config.tracing ? { onRead: cacheReadReport(metrics, config.tracing) } : {}),
    // The memory store answers at once; Redis gets the whole request's budget.
    ...(redis ? { storeBudgetMs: cache.storeTimeoutMs } : {}),
    ...(unsettled ? { unsettled } : {}),
  });
  return { cache: responseCache, store, ...shared, documentRegistry, ...(unsettled ? { unsettled } : {}) };
}
