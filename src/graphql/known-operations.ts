// Known operations: a query this gateway has run before, sent again in the same form, is answered here,
// in front of yoga, on the path a known operation needs and nothing else. The form is what the client
// sends: the document's text (or its persisted hash) and operation name, by POST as JSON or by GET. What
// does not depend on the values was done the first times, by yoga's full path: parsing, the document
// limits (tokens, depth, aliases, directives, fields), validation, the operation's plan, graphql-jit's
// compilation. What depends on the request is done again, as yoga's steps do it: the key (read by the
// HTTP layer), the variables (coerced by the compiled operation), the argument checks and the cost (the
// plan's checks, use-plan.ts), execution, the usage extensions, Cache-Control and a GET's ETag (or 304),
// the security and CORS headers, the stored answer (use-stored-answers.ts), the request log, metrics and
// the slot (use-work.ts).
//
// Anything else goes through yoga, untouched, so that every answer that is not a plain success is
// yoga's own: a refused argument, a cost over the limit or variables that do not coerce (checked here
// before any resolver runs, then left to yoga, which refuses them with its errors); an answer with
// errors (handed to yoga with its result, `handover`, so that yoga formats and masks them and no
// upstream call is made twice); a request with a trace; an Accept that is not plain JSON; @defer/@stream
// and @skip/@include (yoga orders their fields); a subscription; a mutation. Nor anything at all where
// OpenTelemetry traces are made (their spans are yoga's steps). An operation is known once yoga ran it
// compiled (GRAPHQL_JIT_ON_RUN), and stays known while its compiled form is kept
// (COMPILED_CACHE_MAX_BYTES); its forms are kept within a budget of bytes of their own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { SECURITY_HEADERS, ifNoneMatchHas, jsonAnswerType } from '../http-headers.js';
import type { GatewayContext } from '../schema/context.js';
import { type OperationPlan, planRequest } from '../schema/plan.js';
import type { CompiledExecutionStep } from './plugins/use-compiled-execution.js';
import type { PlanCheck } from './plugins/use-plan.js';
import type { RequestLog } from './plugins/use-request-log.js';
import { usageFigures } from './plugins/use-usage-extensions.js';
import { etagOf } from './plugins/use-http-caching.js';
import { keepAnswer } from './plugins/use-stored-answers.js';
import type { AnswerKeeper } from '../cache/stored-answers.js';
import type { GatewayServerContext, RequestState } from './request-state.js';

export interface KnownOperationsOptions {
  schema: GraphQLSchema;
  /** The path GraphQL is served at. */
  endpoint: string;
  /** graphql-jit's compiled operations (use-compiled-execution.ts): an operation is known while compiled. */
  compiled: CompiledExecutionStep;
  /** The plan's checks, as the plan step runs them (argument checks, then the cost). */
  checks: readonly PlanCheck[];
  /** MAX_COST, reported in the usage extensions. */
  costLimit: number;
  /** The ETags' secret (use-http-caching.ts): a GET's answer carries the ETag of its data. */
  etagSecret: () => string;
  /** The CORS headers of an answer to a request from `origin` (none when it is not allowed), as yoga's. */
  cors: (origin: string) => string[];
  /** The request's GraphQL context, as yoga's context factory makes it (graphql/context.ts). */
  context: (state: RequestState, res: ServerResponse) => GatewayContext;
  /** The request log (none below LOG_LEVEL=info). */
  log?: RequestLog;
  /** Each answer given here, for the metrics (an answered query, outcome ok). */
  observe?: (operation: string | null, seconds: number) => void;
  /** Where answers are stored (cache/stored-answers.ts), as use-stored-answers.ts does; none with CACHE=off. */
  answers?: AnswerKeeper;
  /** Bytes of forms kept (text or hash and operation name). */
  maxBytes: number;
}

/** What a known operation's answer needs: its plan, and the name its request gave. */
interface Known {
  operation: OperationPlan;
  operationName: string | null;
}

const NO_HEADERS: readonly string[] = [];
/** Origins whose CORS headers are kept made. */
const MAX_ORIGINS = 64;

interface GraphQLBody {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
}

/**
 * The form of a request's body: `q<operationName>\n<text>`, or `h<operationName>\n<hash>` for a persisted
 * query sent by hash alone; undefined for anything else (no document, a hash with its text, odd types).
 */
export function formOf(body: object): string | undefined {
  const { query, operationName, variables, extensions } = body as GraphQLBody;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  const name = operationName ?? '';
  const persisted =
    typeof extensions === 'object' && extensions !== null
      ? (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } }).persistedQuery
      : undefined;
  if (typeof query === 'string') return persisted === undefined ? `q${name}\n${query}` : undefined;
  if (query !== undefined || persisted === undefined || persisted === null) return undefined;
  return persisted.version === 1 && typeof persisted.sha256Hash === 'string' ? `h${name}\n${persisted.sha256Hash}` : undefined;
}

/** A GET's parameters as yoga reads them (empty means absent; variables and extensions JSON); undefined when they do not parse. */
function paramsOf(url: string): GraphQLBody | undefined {
  const search = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  const json = (name: string): unknown => {
    const value = search.get(name);
    return value ? JSON.parse(value) : undefined;
  };
  try {
    return {
      query: search.get('query') || undefined,
      operationName: search.get('operationName') || undefined,
      variables: json('variables'),
      extensions: json('extensions'),
    };
  } catch {
    return undefined;
  }
}

/** The body of a POST as JSON, or a GET's parameters, at the endpoint; undefined for any other request. */
function bodyOf(req: IncomingMessage, state: RequestState, endpoint: string): GraphQLBody | undefined {
  const url = req.url ?? '';
  if (req.method === 'POST') return url === endpoint ? state.parsedBody : undefined;
  return req.method === 'GET' && url.startsWith(endpoint) && url[endpoint.length] === '?' ? paramsOf(url) : undefined;
}

/** The media type of the answer, as yoga would choose it for the request's Accept; null when not JSON (yoga answers). */
function answerTypeOf(req: IncomingMessage, accepts: Map<string, string | null>): string | null {
  const accept = req.headers.accept ?? '';
  let type = accepts.get(accept);
  if (type === undefined) {
    type = jsonAnswerType(accept);
    // Accept values are few; a client making up new ones fills a bounded map, and is answered by yoga.
    if (accepts.size < 64) accepts.set(accept, type);
    else return null;
  }
  return type;
}

export interface KnownOperations {
  /** Learns the operations yoga runs (after the plan and the compiled execution), and runs a handed-over result. */
  step: Plugin<GatewayContext, GatewayServerContext>;
  /** Answers the request if its operation is known in its form, or calls `next` (yoga). */
  answer(req: IncomingMessage, res: ServerResponse, state: RequestState, next: () => void): void;
}

export function createKnownOperations(options: KnownOperationsOptions): KnownOperations {
  const { schema, endpoint, compiled, checks, costLimit, log, observe } = options;
  const forms = new LRUCache<string, Known>({
    maxSize: Math.max(1, options.maxBytes),
    sizeCalculation: (_known, form) => 2 * form.length + 200,
  });
  const accepts = new Map<string, string | null>();
  // Origins are few (a frontend's): their headers are made once; past the bound, made for each answer.
  const origins = new Map<string, string[]>();
  const corsOf = (origin: string): string[] => {
    let headers = origins.get(origin);
    if (headers === undefined) {
      headers = options.cors(origin);
      if (origins.size < MAX_ORIGINS) origins.set(origin, headers);
    }
    return headers;
  };

  const answerKnown = async (
    req: IncomingMessage,
    res: ServerResponse,
    state: RequestState,
    known: Known,
    body: GraphQLBody,
    type: string,
    next: () => void,
  ): Promise<void> => {
    const startedAt = performance.now();
    const run = compiled.compiledOf(known.operation);
    if (run === undefined) return next();
    const context = options.context(state, res);
    const variables = (body.variables ?? null) as Record<string, unknown> | null;
    const plan = planRequest(schema, known.operation.document.document, known.operationName, variables, context);
    // Variables that do not coerce, a refused argument, a cost over the limit: yoga answers them.
    if (plan === null || plan.selection === null) return next();
    for (const check of checks) if (check(plan, context) !== undefined) return next();
    const result = await run(context, variables);
    if (result.errors !== undefined && result.errors.length > 0) {
      state.handover = { context, result };
      return next();
    }
    const { usage, source } = context;
    const data = JSON.stringify(result.data);
    const text = `{"data":${data},"extensions":${JSON.stringify(usageFigures(usage, costLimit))}}`;
    const freshFor = usage.cache.freshForS;
    const origin = req.headers.origin;
    const headers = [
      'content-type',
      `${type}; charset=utf-8`,
      'content-length',
      String(Buffer.byteLength(text)),
      ...(origin === undefined ? NO_HEADERS : corsOf(origin)),
      'x-content-type-options',
      SECURITY_HEADERS['x-content-type-options'] as string,
      'referrer-policy',
      SECURITY_HEADERS['referrer-policy'] as string,
      'vary',
      'Origin, Authorization',
      'cache-control',
      freshFor === null ? 'no-store' : `private, max-age=${freshFor}`,
    ];
    // A GET's cacheable answer has the ETag of its data, and is a 304 when the client has it (use-http-caching.ts).
    let status = 200;
    if (req.method === 'GET' && freshFor !== null) {
      const etag = etagOf(options.etagSecret(), state.key ?? '', data);
      headers.push('etag', etag);
      if (ifNoneMatchHas(req.headers['if-none-match'] ?? null, etag)) {
        status = 304;
        headers.splice(0, 4);
      }
    }
    res.writeHead(status, headers);
    state.work?.answered(source.keyAccepted());
    res.end(status === 304 ? undefined : text);
    const name = known.operationName ?? known.operation.name ?? null;
    // Looked up and not found: the answer is stored if it can be (use-stored-answers.ts).
    const slot = state.answerSlot;
    if (slot !== undefined) {
      state.answerSlot = undefined;
      if (options.answers && status === 200 && freshFor !== null && freshFor > 0 && usage.cache.stale === 0) {
        keepAnswer(options.answers, slot, { headers, text, usage, operation: known.operation.name ?? null, maxAgeS: freshFor });
      }
    }
    const durationMs = performance.now() - startedAt;
    observe?.(name, durationMs / 1000);
    log?.write(name, {
      durationMs: Math.round(durationMs * 100) / 100,
      upstreamCalls: usage.upstreamCalls,
      cost: usage.cost,
      cache: { hits: usage.cache.hits, misses: usage.cache.misses, stale: usage.cache.stale },
      outcome: 'ok',
      tool: state.tool,
    });
  };

  return {
    answer(req, res, state, next) {
      if (state.trace !== undefined || state.operationType === 'mutation' || state.operationType === 'subscription') {
        return next();
      }
      const body = bodyOf(req, state, endpoint);
      const form = body === undefined ? undefined : formOf(body);
      if (body === undefined || form === undefined) return next();
      // Whenever yoga runs it (here or later), the form is learned if it runs as a known operation can (`step`).
      state.knownForm = form;
      const known = forms.get(form);
      const type = known === undefined ? null : answerTypeOf(req, accepts);
      if (known === undefined || type === null) return next();
      answerKnown(req, res, state, known, body, type, next).catch((error: unknown) => {
        // A fault of this path, never of the request: yoga answers it (a read-only query, run again).
        log?.fault(error);
        if (!res.headersSent) {
          state.handover = undefined;
          next();
        } else res.destroy();
      });
    },
    step: {
      onExecute({ args, setExecuteFn }) {
        const context = args.contextValue as GatewayContext & GatewayServerContext;
        const state = context.state;
        if (state === undefined) return;
        const handover = state.handover;
        if (handover !== undefined) {
          state.handover = undefined;
          setExecuteFn(() => handover.result);
          return;
        }
        const planned = context.plan;
        const form = state.knownForm;
        if (!planned || planned.selection === null || form === undefined) return;
        const { operation } = planned;
        // Known already, as this plan (a document parsed again has a plan of its own, compiled anew).
        if (forms.get(form)?.operation === operation) return;
        if (operation.type !== 'query' || operation.document.incremental || operation.document.conditional) return;
        if (compiled.compiledOf(operation) === undefined) return;
        forms.set(form, { operation, operationName: args.operationName ?? null });
      },
    },
  };
}
