// yoga and its plugins (in the order a request meets them), and the GraphQL layer's one way in: `answer`,
// by the known operations' path or by yoga, as plain data that the ending (http/answer.ts) sends.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { normalizeNodeRequest } from '@whatwg-node/server';
import type { LIVE_SETTINGS, LiveHub } from '../live/hub.js';
import type { SettingsOf } from '../settings.js';
import type { YOGA_SETTINGS } from './endpoint-settings.js';
import type { GatewayContext } from '../schema/context.js';
import { schema, subgraphSchema } from '../schema/index.js';
import type { RequestBounds, Upstream } from '../upstream/source.js';
import { type GatewayServerContext, type GraphQLRun, createContext, newRun } from './context.js';
import type { Answer, AnswerFacts } from './answered.js';
import { type CorsConfig, corsOptionsFor, isAllowedOrigin } from './cors.js';
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
import { liveFreshnessMs, useLive } from './plugins/use-live.js';
import { useNoServiceSdl } from './plugins/use-no-service-sdl.js';
import { useNoSuggestions } from './plugins/use-no-suggestions.js';
import { useOperationName } from './plugins/use-operation-name.js';
import { usePlan } from './plugins/use-plan.js';
import { useSelectionOrder } from './plugins/use-selection-order.js';
import { useSubscriptionRoot } from './plugins/use-subscription-root.js';
import { useTracing } from './plugins/use-tracing.js';
import { useUsageExtensions } from './plugins/use-usage-extensions.js';
import { type REQUEST_TRACE_SETTINGS, tracesAllowed, useRequestTrace } from './plugins/use-request-trace.js';
import { createValidationCache } from './plugins/use-validation-cache.js';
import { useAnswerFacts } from './plugins/use-answer-facts.js';
import { useWork } from './plugins/use-work.js';
import { GRAPHQL_ENDPOINT } from '../http-headers.js';
import { type RequestState, livePollState } from '../request-state.js';
import { createKnownOperations } from './known-operations.js';

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
    tracing: boolean;
  };

export interface GatewayYogaOptions {
  upstream: Upstream;
  documentRegistry?: DocumentRegistry;
  graphiql?: Omit<GraphiQLPageOptions, 'endpoint'>;
  /** Without it a subscription is refused. */
  live?: LiveHub;
  /** A live poll's answer, counted and logged as every answer is. */
  polled?: (state: RequestState, answer: Answer) => void;
  onFault?: (error: unknown) => void;
  /** Trusted besides PERSISTED_DOCUMENTS', by SHA-256: the MCP tools'. */
  trustedDocuments?: ReadonlyMap<string, string>;
}

export type GatewayYoga = YogaServerInstance<GatewayServerContext, GatewayContext>;

const JSON_ANSWER = /^(application\/(?:graphql-response\+)?json)\b/;

/** null when no GraphQL ran (a page, a preflight). */
function factsOf(run: GraphQLRun): AnswerFacts | null {
  if (run.errorCodes === undefined) return null;
  const { context } = run;
  return {
    operation: run.operation,
    documentName: run.documentName,
    type: run.type,
    errorCodes: run.errorCodes,
    usage: context?.usage ?? null,
    keyAccepted: context?.source.keyAccepted() === true,
    ...(run.traceId === undefined ? {} : { traceId: run.traceId }),
  };
}

/** Yoga's response as an answer: a JSON one as text with its own headers; any other whole. */
export async function answerOf(response: Response, run: GraphQLRun): Promise<Answer> {
  const facts = factsOf(run);
  const json = JSON_ANSWER.exec(response.headers.get('content-type') ?? '');
  if (facts === null || json === null) return { response, facts };
  const headers: string[] = [];
  response.headers.forEach((value, name) => {
    if (name !== 'content-type' && name !== 'content-length') headers.push(name, value);
  });
  return {
    status: response.status,
    contentType: json[1] as string,
    body: await response.text(),
    data: run.data,
    facts,
    ...(headers.length > 0 ? { headers } : {}),
  };
}

/** Bytes of request forms the known-operations path keeps. */
const KNOWN_FORMS_MAX_BYTES = 4 * 1024 * 1024;

export function createGatewayYoga(
  config: GatewayYogaConfig,
  { upstream, graphiql = {}, documentRegistry, live, polled, onFault, trustedDocuments }: GatewayYogaOptions,
) {
  const validation = createValidationCache();
  const { limits, persistedQueries: pq } = config;
  const manifest = pq.documentsPath === null ? new Map<string, string>() : loadPersistedDocuments(pq.documentsPath);
  for (const [hash, document] of trustedDocuments ?? []) manifest.set(hash, document);
  const servedSchema = config.federation ? subgraphSchema().schema : schema;
  // The plan's checks, in this order: a perPage of 1000 is a refused argument, not an expensive operation.
  const checks = [useArgumentChecks(), useCostLimit({ limit: config.maxCost })];
  const plan = usePlan(checks);
  const compiled = useCompiledExecution(plan, { onRun: config.jitOnRun, maxBytes: config.compiledCacheMaxBytes });
  const traces = tracesAllowed(config);
  // Not where OpenTelemetry traces are made: their spans are yoga's steps.
  const known = config.tracing
    ? undefined
    : createKnownOperations({
        schema: servedSchema,
        endpoint: GRAPHQL_ENDPOINT,
        compiled,
        checks,
        costLimit: config.maxCost,
        context: (state, run, res) => (run.context = createContext(upstream, config, state, res, undefined, run.trace)),
        maxBytes: KNOWN_FORMS_MAX_BYTES,
        ...(onFault ? { onFault } : {}),
      });
  const yoga: GatewayYoga = createYoga<GatewayServerContext, GatewayContext>({
    schema: servedSchema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    // /health is http/server.ts's. Yoga's check answers any URL ending with its endpoint (/foo/health):
    // no URL ends with a space, so it answers none.
    healthCheckEndpoint: ' ',
    landingPage: false,
    logging: false,
    batching: false,
    // Validation results are use-validation-cache.ts's.
    parserAndValidationCache: { ...createDocumentCaches(config.documentCacheMaxBytes), validationCache: false },
    maskedErrors: { isDev: !config.production },
    graphiql: false,
    // Yoga answers a preflight for an allowed origin; every other answer's CORS headers are the ending's.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (request.method !== 'OPTIONS' || origin === null || !isAllowedOrigin(origin, config)) return false;
      return corsOptionsFor(origin);
    },
    // A live poll reads today's figures fresh, not from a cache entry of up to CACHE_TTL_RECENT_S.
    context: (initial) => {
      const { request, state, run } = initial;
      if (run.erredResult !== undefined) return (run.context = run.erredResult.context);
      const { res } = initial as { res?: ServerResponse };
      const freshness = state.livePoll ? { recentMaxAgeMs: liveFreshnessMs(config.live.intervalMs) } : undefined;
      run.context = createContext(upstream, config, state, res ?? request.signal, freshness, run.trace);
      return run.context;
    },
    plugins: [
      ...(config.graphiql ? [useGraphiQLPage({ ...graphiql, endpoint: GRAPHQL_ENDPOINT, traces })] : []),
      useBrowserPostGuard(),
      useGetParams(),
      ...usePersistedQueries({
        ...pq,
        manifest,
        keyAccepted: (context) => (context as GatewayContext).source.keyAccepted(),
        registry: documentRegistry,
      }),
      useDocumentLimits(limits),
      useOperationName(),
      // Before validation: the rules, the look-ahead and the compiler all expand fragments.
      useFieldLimit({ limit: limits.fields }),
      useDeferStream(),
      useDateLiterals(),
      useSubscriptionRoot(),
      ...(config.introspection ? [] : [useDisableIntrospection(), useNoSuggestions(), ...(config.federation ? [useNoServiceSdl()] : [])]),
      useUsageExtensions({ costLimit: config.maxCost }),
      ...(traces ? [useRequestTrace()] : []),
      plan,
      // Wraps the standard executor, which a compiled operation skips.
      useSelectionOrder(plan),
      compiled,
      // After the compiled execution: it learns the operations run compiled.
      ...(known ? [known.step] : []),
      ...(config.tracing ? [useTracing({ plan })] : []),
      useAnswerFacts({ plan }),
      useWork(),
      // A subscription's polls are queries run by this same yoga: every rule above applies to them.
      ...(live
        ? [
            useLive({
              hub: live,
              maxStreamsPerKey: config.live.maxStreamsPerKey,
              runQuery: async ({ subscriber, ...body }, signal) => {
                const state = livePollState(subscriber.credentials);
                const run = newRun(state);
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
                  { state, run },
                );
                const answer = await answerOf(response, run);
                polled?.(state, answer);
                return JSON.parse('body' in answer ? String(answer.body) : await answer.response.text()) as ExecutionResult;
              },
            }),
          ]
        : []),
      validation.plugin,
    ].map(validation.onlyToValidate),
  });
  return {
    yoga,
    async answer(req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<Answer> {
      const run = newRun(state);
      const answered = known?.answer(req, res, state, run);
      if (answered !== undefined) {
        const answer = await answered;
        if (answer !== undefined) return answer;
      }
      // Yoga takes the JSON body parsed once (the state's), in place of its bytes.
      const body = state.body();
      if (body !== undefined) (req as { body?: unknown }).body = body;
      const request = normalizeNodeRequest(req, yoga.fetchAPI, res);
      const response = await yoga.fetch(request, { req, res, state, run } as Partial<GatewayServerContext>);
      return answerOf(response, run);
    },
  };
}
