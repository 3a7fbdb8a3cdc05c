// The composition root: createGateway(config) builds the upstream client, what the gateway learns of
// the upstream (the statistics' names), the stores (this process's memory or Redis), the read cache, the
// clock and yoga, and puts the HTTP server (http/server.ts) in front of them. Nothing else builds them.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type StdoutLog, stdoutLogger } from './log.js';
import type { Dispatcher } from 'undici';
import type { Config } from './config.js';
import type { DocumentRegistry } from './graphql/plugins/use-persisted-queries.js';
import { GRAPHQL_ENDPOINT, createGatewayYoga } from './graphql/yoga.js';
import { RequestLog } from './graphql/plugins/use-request-log.js';
import { tracesAllowed } from './graphql/plugins/use-request-trace.js';
import type { RequestState } from './graphql/request-state.js';
import { createAnswerCache, type AnswerCache } from './cache/stored-answers.js';
import { DURATION_BUCKETS_S, createGatewayMetrics, reportToPrimary, serveMetrics, type GatewayMetrics } from './http/metrics-listener.js';
import { serveHttp } from './http/server.js';
import { handOverParsedBody, parsedLater } from './http/operation-type.js';
import { recordCacheRead, traceStoredAnswer, traceUpstreamCall } from './tracing.js';
import { createLiveHub } from './live/hub.js';
import { RedisLiveShare } from './live/redis-share.js';
import { NO_CACHE, createResponseCache, type ResponseCache } from './cache/read-cache.js';
import type { CacheStore } from './cache/store.js';
import { MemoryCacheStore } from './cache/memory-store.js';
import { RedisCacheStore } from './cache/redis-store.js';
import { UnsettledWrites } from './cache/unsettled.js';
import { safeStore } from './cache/waiting.js';
import { createUpstreamClient } from './upstream/client.js';
import { evictsKeysWithoutExpiry } from './cache/redis-connection.js';
import { createStatNames } from './upstream/dialect.js';
import { schema } from './schema/index.js';
import { isAllowedOrigin } from './graphql/cors.js';
import { TOOL_HEADER } from './http-headers.js';
import { type Loopback, createLoopback } from './http/loopback.js';
import { MCP_ENDPOINT, createMcpHttpHandler } from './mcp/http.js';
import type { McpService, RunOperation } from './mcp/server.js';
import { createMcpService, type McpSetup } from './mcp/service.js';
import type { OperationOutcome } from './mcp/results.js';

export interface GatewayOptions {
  /** undici dispatcher for the upstream (tests inject a MockAgent). */
  dispatcher?: Dispatcher;
  /** Key prefilled in GraphiQL's headers (sandbox mode only). */
  demoKey?: string;
  /** Where request log lines go; default: pino to stdout at config.logLevel. */
  logger?: Logger;
  /** A worker (WORKERS > 1): the metrics go to the primary, which serves METRICS_PORT for all workers. */
  metricsToPrimary?: boolean;
  /** The clock of the cache and of periods (tests pin "today" with it); default Date.now. */
  now?: () => number;
}

export interface Gateway {
  /** Base URL, e.g. http://127.0.0.1:4000; GraphQL is at `${url}/graphql`. */
  url: string;
  server: Server;
  /** Base URL of the metrics listener (METRICS_PORT), the text at `${metricsUrl}/metrics`; null when off. */
  metricsUrl: string | null;
  /**
   * Stops without losing a request (http/drain.ts): /ready turns 503 and every `onDraining` listener
   * is called at once, then the listener closes after DRAIN_DELAY_MS and what is in flight finishes
   * (up to DRAIN_TIMEOUT_MS); then the upstream pool and the store close.
   */
  drain(): Promise<void>;
  /** Called once, when drain starts: what must end before the gateway stops (long-lived answers) ends here. */
  onDraining(listener: () => void): void;
  /** Ends every connection at once, then closes the upstream pool and the store. */
  close(): Promise<void>;
  /** The MCP tools and what runs them (served at /mcp; stdio uses them too); null with MCP=off. */
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
  // A repeated query answered before GraphQL runs, from the read cache's store (cache/stored-answers.ts).
  const answers: AnswerCache | undefined = store
    ? createAnswerCache({
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
  // The request log (none below LOG_LEVEL=info: its lines would be built for nothing). A stored answer's
  // line is written here, as use-request-log.ts writes the others'.
  const requestLog = logger.isLevelEnabled('info') ? new RequestLog(logger, lines) : undefined;
  const toldOfStored = metrics !== null || config.tracing || requestLog !== undefined;
  if (toldOfStored)
    answers?.whenSent(({ req, operation, cost, reads, status, startedAt, durationMs, tool }) => {
      metrics?.storedAnswer('sent');
      const traceId = config.tracing ? traceStoredAnswer(req, status, startedAt) : undefined;
      requestLog?.write(operation, {
        durationMs,
        upstreamCalls: 0,
        cost,
        cache: { hits: reads, misses: 0, stale: 0 },
        outcome: 'ok',
        storedAnswer: true,
        trace_id: traceId,
        tool,
      });
    });
  const upstream = { client, statNames: createStatNames(config.upstream.statNames), cache, clock };
  // Subscriptions' pollers: with Redis, one poller per topic among all the gateways on it; without,
  // each gateway polls for its own streams.
  const live = createLiveHub({
    ...config.live,
    ...(keySecret ? { keySecret } : {}),
    ...(config.cache.redisUrl === null
      ? {}
      : { share: new RedisLiveShare(config.cache.redisUrl, config.cache.storeTimeoutMs, onStoreError), onShareError: onStoreError }),
  });
  // MCP: a tool call is a GraphQL request to this gateway's own port, its document sent by hash
  // (trusted below), with the caller's key and the tool's name for the log line.
  let listening = '';
  const loopback = createLoopback(() => listening);
  const mcp: McpSetup | null = config.mcp.enabled ? createMcpService(schema, config.mcp, runThrough(loopback)) : null;
  const { yoga, answer } = createGatewayYoga(config, {
    ...(mcp ? { trustedDocuments: mcp.documents } : {}),
    upstream,
    ...(requestLog ? { requestLog } : {}),
    live,
    ...(answers ? { answers } : {}),
    ...(etagSecret ? { etagSecret } : {}),
    documentRegistry,
    graphiql: options.demoKey ? { demoKey: options.demoKey } : {},
    ...(metrics && config.metrics
      ? { metrics: { registry: metrics.registry, buckets: DURATION_BUCKETS_S, maxOperations: config.metrics.maxOperations } }
      : {}),
  });
  // The request's state goes to yoga as its server context. The answer produced (by yoga, or stored)
  // frees the request's slot: use-work.ts, http/server.ts.
  const toYoga = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    handOverParsedBody(req, state);
    void yoga(req, res, { state });
  };
  // A query run before, sent again in the same form, is answered in front of yoga (known-operations.ts).
  // Both read the JSON body: one the HTTP layer knew without parsing (seen lately) is parsed here, once.
  const toGraphQL = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    if (state.parseLater === true) {
      state.parsedBody ??= parsedLater(req, state);
      state.parseLater = false;
    }
    answer(req, res, state, () => toYoga(req, res, state));
  };
  const http = await serveHttp(
    answers
      ? (req, res, state) =>
          answers.serve(
            req,
            res,
            state,
            () => toGraphQL(req, res, state),
            // Sent only for a key the upstream accepted within KEY_RECHECK_S.
            () => state.work?.answered(true),
          )
      : toGraphQL,
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
  // Its own listener, never the public port (http/metrics-listener.ts).
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

/**
 * How an MCP tool call runs its operation: as a GraphQL request to this gateway, the persisted query's
 * hash and the operation's name in place of its text, the caller's key, the tool's name for the log line
 * and the client's trace context.
 */
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

/** What a cache read reports to: the metrics, the active span, or both. */
function cacheReadReport(metrics: GatewayMetrics | null, tracing: boolean): (result: 'hit' | 'miss' | 'stale') => void {
  if (metrics && tracing) {
    return (result) => {
      metrics.cacheRead(result);
      recordCacheRead(result);
    };
  }
  return metrics ? metrics.cacheRead : recordCacheRead;
}

/** How long the check at start waits for Redis to be connected. */
const REDIS_START_WAIT_MS = 5_000;

/**
 * At start, one line in the log when Redis is not usable (its credentials refused: NOAUTH or WRONGPASS,
 * named) or when its maxmemory-policy may evict keys that have no expiry: the hash secret and the
 * counters that drop a key's entries, which must stay (docs/caching.md).
 */
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

/** The read cache as configured (off, in this process's memory, or in Redis), and Redis's home for APQ. */
function createCache(
  config: Config,
  logger: Logger,
  now: (() => number) | undefined,
  metrics: GatewayMetrics | null,
): {
  cache: ResponseCache;
  /** The read cache's store; none with CACHE=off. */
  store?: CacheStore;
  documentRegistry?: DocumentRegistry;
  storeConnection: () => string;
  /** Says, at most once per 10 s per kind of operation, that the store failed. */
  onStoreError: (operation: string, error: unknown) => void;
  /** With Redis: the secret every gateway on it hashes keys with (so that they name a key's topics alike). */
  keySecret?: () => Promise<string>;
  /** With Redis: the keys with an invalidation pending after a write Redis did not take (cache/unsettled.ts). */
  unsettled?: UnsettledWrites;
  /**
   * With Redis: the ETags' secret, Redis's (the gateways on it agree) once read, never waited for
   * (this process's until then: at worst a 200 where a 304 could have been).
   */
  etagSecret?: () => string;
} {
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
  if (redis) checkRedisAtStart(redis, logger);
  // What /ready reports of the store: `redis ready` when connected, `redis reconnecting` when not (and
  // why, when Redis or the sentinels refuse the credentials).
  const storeConnection = (): string => (redis ? `redis ${redis.connection}` : cache.enabled ? 'memory' : 'off');
  const processSecret = randomBytes(32).toString('hex');
  const shared = {
    storeConnection,
    onStoreError,
    ...(redis ? { keySecret: () => redis.secret(), etagSecret: () => redis.known ?? processSecret } : {}),
  };
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
    return {
      cache: { ...NO_CACHE, close: async () => redis?.close() },
      ...shared,
      documentRegistry,
    };
  }
  const store = redis ?? new MemoryCacheStore(cache.maxBytes, now);
  // The memory store always takes a write's invalidation; Redis may not (cut, paused, slow, full).
  const unsettled = redis ? new UnsettledWrites(redis, safeStore(onStoreError), cache.settledMs + cache.maxStaleMs) : undefined;
  const responseCache = createResponseCache({
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
