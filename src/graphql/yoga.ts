// yoga with our schema and the plugin list: the order below is the order a request meets them.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { AnswerKeeper } from '../cache/stored-answers.js';
import type { LIVE_SETTINGS, LiveHub } from '../live/hub.js';
import { flag, onOff, type SettingsOf } from '../settings.js';
import type { GatewayContext } from '../schema/context.js';
import { schema, subgraphSchema } from '../schema/index.js';
import type { RequestBounds, Upstream } from '../upstream/source.js';
import { createContext } from './context.js';
import { type CorsConfig, corsAnswerHeaders, corsOptionsFor, isAllowedOrigin } from './cors.js';
import { type DOCUMENT_CACHE_SETTINGS, createDocumentCaches } from './document-cache.js';
import { useGraphiQLPage, type GraphiQLPageOptions } from './plugins/use-graphiql-page.js';
import {
  loadPersistedDocuments,
  type PERSISTED_QUERY_SETTINGS,
  usePersistedQueries,
  type DocumentRegistry,
} from './plugins/use-persisted-queries.js';
import { useArgumentChecks } from './plugins/use-argument-checks.js';
import { useBrowserPostGuard } from './plugins/use-browser-post-guard.js';
import { useGetParams } from './plugins/use-get-params.js';
import { type COMPILED_EXECUTION_SETTINGS, useCompiledExecution } from './plugins/use-compiled-execution.js';
import { type COST_LIMIT_SETTINGS, useCostLimit } from './plugins/use-cost-limit.js';
import { useDateLiterals } from './plugins/use-date-literals.js';
import { type DOCUMENT_LIMIT_SETTINGS, useDocumentLimits } from './plugins/use-document-limits.js';
import { type FIELD_LIMIT_SETTINGS, useFieldLimit } from './plugins/use-field-limit.js';
import { processEtagSecret, useHttpCaching } from './plugins/use-http-caching.js';
import { liveFreshnessMs, useLive } from './plugins/use-live.js';
import { useMetrics, type MetricsOptions } from './plugins/use-metrics.js';
import { useNoServiceSdl } from './plugins/use-no-service-sdl.js';
import { useNoSuggestions } from './plugins/use-no-suggestions.js';
import { useOperationName } from './plugins/use-operation-name.js';
import { usePlan } from './plugins/use-plan.js';
import { type RequestLog, useRequestLog } from './plugins/use-request-log.js';
import { useSecurityHeaders } from './plugins/use-security-headers.js';
import { useSelectionOrder } from './plugins/use-selection-order.js';
import { useStoredAnswers } from './plugins/use-stored-answers.js';
import { useSubscriptionRoot } from './plugins/use-subscription-root.js';
import { useTracing } from './plugins/use-tracing.js';
import { useUsageExtensions } from './plugins/use-usage-extensions.js';
import { type REQUEST_TRACE_SETTINGS, tracesAllowed, useRequestTrace } from './plugins/use-request-trace.js';
import { createValidationCache } from './plugins/use-validation-cache.js';
import { useWork } from './plugins/use-work.js';
import { type GatewayServerContext, type RequestState, livePollState, stateOf } from './request-state.js';
import { createKnownOperations } from './known-operations.js';

export const GRAPHQL_ENDPOINT = '/graphql';

/** What the GraphQL endpoint offers besides queries: GraphiQL, introspection, and serving as a subgraph. */
export const YOGA_SETTINGS = {
  graphiql: flag('GRAPHIQL', {
    fallback: true,
    productionFallback: false,
    doc: 'serve GraphiQL at /graphql to browsers; false by default when NODE_ENV=production',
  }),
  introspection: flag('INTROSPECTION', {
    fallback: true,
    productionFallback: false,
    doc: 'allow introspection queries; false by default when NODE_ENV=production',
  }),
  federation: onOff('FEDERATION', { fallback: false, doc: 'on: served as a Federation 2 subgraph for a router' }),
};

/** The settings yoga and its plugins are built with: each module's own, as config.ts read them. */
export type GatewayYogaConfig = SettingsOf<typeof YOGA_SETTINGS> &
  CorsConfig &
  RequestBounds &
  SettingsOf<typeof COST_LIMIT_SETTINGS> &
  SettingsOf<typeof DOCUMENT_CACHE_SETTINGS> &
  SettingsOf<typeof COMPILED_EXECUTION_SETTINGS> &
  SettingsOf<typeof REQUEST_TRACE_SETTINGS> & {
    limits: SettingsOf<typeof DOCUMENT_LIMIT_SETTINGS> & SettingsOf<typeof FIELD_LIMIT_SETTINGS>;
    persistedQueries: SettingsOf<typeof PERSISTED_QUERY_SETTINGS>;
    live: Pick<SettingsOf<typeof LIVE_SETTINGS>, 'intervalMs' | 'maxStreamsPerKey'>;
    /** OpenTelemetry traces are made (tracing.ts). */
    tracing: boolean;
  };

export interface GatewayYogaOptions {
  upstream: Upstream;
  /** Where APQ registrations go when several gateways share a store (Redis); default this process. */
  documentRegistry?: DocumentRegistry;
  /** The request log (gateway.ts; none below LOG_LEVEL=info): a line per request. */
  requestLog?: RequestLog;
  /** GraphiQL's demo key (sandbox mode). */
  graphiql?: Omit<GraphiQLPageOptions, 'endpoint'>;
  /** Where the GraphQL figures go (METRICS_PORT set); without it none are kept. */
  metrics?: Omit<MetricsOptions, 'plan'>;
  /** The shared pollers of subscriptions (live/hub.ts); without it a subscription is refused. */
  live?: LiveHub;
  /** Stored answers (cache/stored-answers.ts), which this yoga fills; none with CACHE=off. */
  answers?: StoredAnswers;
  /** The ETags' secret: the cache's (shared by the gateways on a Redis); default one of this process's. */
  etagSecret?: () => string;
  /** Documents trusted besides PERSISTED_DOCUMENTS', by SHA-256: the MCP tools' (mcp/service.ts). */
  trustedDocuments?: ReadonlyMap<string, string>;
}

/** What yoga sees of the stored answers (cache/stored-answers.ts): where they are kept, and each one sent. */
export interface StoredAnswers extends AnswerKeeper {
  whenSent(listener: (sent: { operation: string | null; durationMs: number }) => void): void;
}

export type GatewayYoga = YogaServerInstance<GatewayServerContext, GatewayContext>;

/** Yoga, and the path in front of it for the operations it ran before (known-operations.ts). */
export interface GatewayGraphQL {
  yoga: GatewayYoga;
  /** Answers a request whose operation is known in its form, or calls `next` (yoga). */
  answer(req: IncomingMessage, res: ServerResponse, state: RequestState, next: () => void): void;
}

/** Bytes of request forms (a document's text or hash, an operation name) the known-operations path keeps. */
const KNOWN_FORMS_MAX_BYTES = 4 * 1024 * 1024;

export function createGatewayYoga(
  config: GatewayYogaConfig,
  { upstream, requestLog, graphiql = {}, documentRegistry, live, metrics, answers, etagSecret, trustedDocuments }: GatewayYogaOptions,
): GatewayGraphQL {
  const validation = createValidationCache();
  const { limits, persistedQueries: pq } = config;
  const manifest = pq.documentsPath === null ? new Map<string, string>() : loadPersistedDocuments(pq.documentsPath);
  for (const [hash, document] of trustedDocuments ?? []) manifest.set(hash, document);
  // The ETags' secret: the cache's (shared by the gateways on a store), or this process's.
  const secret = etagSecret ?? processEtagSecret();
  const servedSchema = config.federation ? subgraphSchema().schema : schema;
  // The first step of execution: the operation's plan (schema/plan.ts), and the checks that refuse it
  // before any resolver runs, in this order (a perPage of 1000 is a refused argument, not an expensive
  // operation). The steps that read the plan are given it: none can run before it.
  const checks = [useArgumentChecks(), useCostLimit({ limit: config.maxCost })];
  const plan = usePlan(checks);
  const compiled = useCompiledExecution(plan, { onRun: config.jitOnRun, maxBytes: config.compiledCacheMaxBytes });
  // X-Gateway-Trace is heard: GraphiQL sends it, and answers carry their trace.
  const traces = tracesAllowed(config);
  const metricsStep = metrics ? useMetrics({ ...metrics, plan }) : undefined;
  if (metricsStep) answers?.whenSent((sent) => metricsStep.observeStored(sent.operation, sent.durationMs / 1000));
  // A query run before, sent again in the same form, is answered without yoga (known-operations.ts);
  // not where OpenTelemetry traces are made: their spans are yoga's steps.
  const known = config.tracing
    ? undefined
    : createKnownOperations({
        schema: servedSchema,
        endpoint: GRAPHQL_ENDPOINT,
        compiled,
        checks,
        costLimit: config.maxCost,
        etagSecret: secret,
        ...(answers ? { answers } : {}),
        cors: (origin) => (isAllowedOrigin(origin, config) ? corsAnswerHeaders(origin) : []),
        context: (state, res) => (state.context = createContext(upstream, config, state, res)),
        ...(requestLog ? { log: requestLog } : {}),
        ...(metricsStep ? { observe: (operation: string | null, seconds: number) => metricsStep.observeStored(operation, seconds) } : {}),
        maxBytes: KNOWN_FORMS_MAX_BYTES,
      });
  const yoga: GatewayYoga = createYoga<GatewayServerContext, GatewayContext>({
    schema: servedSchema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    landingPage: false,
    logging: false,
    batching: false,
    // Bounded by what the documents cost, not by their number (document-cache.ts); validation results
    // are kept by use-validation-cache.ts instead, without running every plugin's onValidate each time.
    parserAndValidationCache: { ...createDocumentCaches(config.documentCacheMaxBytes), validationCache: false },
    maskedErrors: { isDev: !config.production },
    // Served by useGraphiQLPage: compressed, with an ETag.
    graphiql: false,
    // Answers carry CORS headers only for an allowed origin; a preflight is refused by nothing else.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (origin === null || !isAllowedOrigin(origin, config)) return false;
      return corsOptionsFor(origin);
    },
    // The request's state (request-state.ts) came with it from the HTTP layer, or from a live poll
    // (use-live.ts), which reads today's figures from the upstream, not from a cache entry of up to
    // CACHE_TTL_RECENT_S. The context is kept in the state, for the steps after execution.
    context: (initial) => {
      const { request } = initial;
      const state = stateOf(initial, request);
      // A result the known-operations path ran, with its context: answered as it is.
      if (state.handover !== undefined) return (state.context = state.handover.context);
      const { res } = initial as { res?: ServerResponse };
      const freshness = state.livePoll ? { recentMaxAgeMs: liveFreshnessMs(config.live.intervalMs) } : undefined;
      state.context = createContext(upstream, config, state, res ?? request.signal, freshness);
      return state.context;
    },
    plugins: [
      ...(config.graphiql ? [useGraphiQLPage({ ...graphiql, endpoint: GRAPHQL_ENDPOINT, traces })] : []),
      useBrowserPostGuard(),
      useGetParams(),
      ...usePersistedQueries({
        maxEntries: pq.maxEntries,
        maxBytes: pq.maxBytes,
        manifest,
        trustedOnly: pq.trustedOnly,
        keyAccepted: (context) => (context as GatewayContext).source.keyAccepted(),
        registry: documentRegistry,
      }),
      // Tokens while parsing; depth, aliases and directives as validation rules.
      useDocumentLimits({ tokens: limits.tokens, depth: limits.depth, aliases: limits.aliases, directives: limits.directives }),
      // Once parsed: a document whose operation operationName does not pick is answered before validation.
      useOperationName(),
      // Before validation runs at all: the rules, the look-ahead and the compiler all expand fragments.
      useFieldLimit({ limit: limits.fields }),
      useDeferStream(),
      useDateLiterals(),
      // A subscription's one top-level field may not be skipped: a stream that selects nothing never asks the upstream.
      useSubscriptionRoot(),
      // Without introspection, validation errors suggest no names either ("Did you mean …" goes), and a
      // subgraph does not print its schema (`_service { sdl }`).
      ...(config.introspection ? [] : [useDisableIntrospection(), useNoSuggestions(), ...(config.federation ? [useNoServiceSdl()] : [])]),
      useUsageExtensions({ costLimit: config.maxCost }),
      // Only where X-Gateway-Trace is heard: elsewhere no request has a trace to give.
      ...(traces ? [useRequestTrace()] : []),
      plan,
      // Before the compiled execution: it wraps the standard executor, which a compiled operation skips.
      useSelectionOrder(plan),
      compiled,
      // After the compiled execution: it learns the operations run compiled, and runs a handed-over result.
      ...(known ? [known.step] : []),
      useSecurityHeaders(),
      useHttpCaching({ plan, etagSecret: secret }),
      // After it: an answer is stored with its Cache-Control and ETag.
      ...(answers ? [useStoredAnswers({ plan, answers })] : []),
      ...(metricsStep ? [metricsStep] : []),
      ...(config.tracing ? [useTracing({ plan })] : []),
      ...(requestLog ? [useRequestLog({ plan, log: requestLog })] : []),
      // The answer produced frees the request's slot; a subscription found by hash moves to a stream's place.
      useWork(),
      // A subscription's polls are queries run by this same yoga, in process: every rule above applies to them.
      ...(live
        ? [
            useLive({
              hub: live,
              maxStreamsPerKey: config.live.maxStreamsPerKey,
              runQuery: async ({ subscriber, ...body }, signal) => {
                const response = await yoga.fetch(
                  `http://live.internal${GRAPHQL_ENDPOINT}`,
                  {
                    method: 'POST',
                    headers: {
                      'content-type': 'application/json',
                      accept: 'application/json',
                      authorization: subscriber.authorization,
                    },
                    body: JSON.stringify(body),
                    signal,
                  },
                  // No HTTP request can carry a state: only the gateway's own polls run as one.
                  { state: livePollState(subscriber.credentials) },
                );
                return (await response.json()) as ExecutionResult;
              },
            }),
          ]
        : []),
      // Last, and itself kept as it is: a document validated before is answered with its result.
      validation.plugin,
    ].map(validation.onlyToValidate),
  });
  return { yoga, answer: known ? known.answer : (_req, _res, _state, next) => next() };
}
