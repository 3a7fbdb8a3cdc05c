// Known operations: a query this gateway has run before, sent again in the same form, is answered here,
// in front of yoga, on the path a known operation needs and nothing else. The form is what the client
// sends: the document's text (or its persisted hash) and operation name, by POST as JSON or by GET. What
// does not depend on the values was done the first times, by yoga's full path: parsing, the document
// limits (tokens, depth, aliases, directives, fields), validation, the operation's plan, graphql-jit's
// compilation. What depends on the request is done again, as yoga's steps do it: the key (read by the
// HTTP layer), the variables (coerced by the compiled operation), the argument checks and the cost (the
// plan's checks, use-plan.ts), execution and the usage extensions. The answer it makes goes out through
// the HTTP layer's ending (http/answer.ts) as yoga's does: headers, ETag, stored answer, log, metrics, slot.
//
// Anything else goes through yoga, untouched, so that every answer that is not a plain success is
// yoga's own: a refused argument, a cost over the limit or variables that do not coerce (checked here
// before any resolver runs, then left to yoga, which refuses them with its errors); an answer with
// errors (handed to yoga with its result, `erredResult`, so that yoga formats and masks them and no
// upstream call is made twice); a request with a trace; an Accept that is not plain JSON; @defer/@stream
// and @skip/@include (yoga orders their fields); a subscription; a mutation. Nor anything at all where
// OpenTelemetry traces are made (their spans are yoga's steps). An operation is known once yoga ran it
// compiled (GRAPHQL_JIT_ON_RUN), and stays known while its compiled form is kept
// (COMPILED_CACHE_MAX_BYTES); its forms are kept within a budget of bytes of their own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { jsonAnswerType } from '../http-headers.js';
import type { JsonAnswer } from './answered.js';
import type { RequestState } from '../request-state.js';
import type { GatewayContext } from '../schema/context.js';
import { type OperationPlan, planRequest } from '../schema/plan.js';
import type { GatewayServerContext, GraphQLRun } from './context.js';
import type { CompiledExecutionStep } from './plugins/use-compiled-execution.js';
import type { PlanCheck } from './plugins/use-plan.js';
import { usageFigures } from './plugins/use-usage-extensions.js';

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
  /** The request's GraphQL context, as yoga's context factory makes it (graphql/context.ts). */
  context: (state: RequestState, run: GraphQLRun, res: ServerResponse) => GatewayContext;
  /** Bytes of forms kept (text or hash and operation name). */
  maxBytes: number;
  /** A fault of this path's own (the request is then answered by yoga). */
  onFault?: (error: unknown) => void;
}

/** What a known operation's answer needs: its plan, and the name its request gave. */
interface Known {
  operation: OperationPlan;
  operationName: string | null;
}

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
  if (req.method === 'POST') return url === endpoint ? state.body() : undefined;
  return req.method === 'GET' && url.startsWith(endpoint) && url[endpoint.length] === '?' ? paramsOf(url) : undefined;
}

export interface KnownOperations {
  /** Learns the operations yoga runs (after the plan and the compiled execution), and runs a handed-over result. */
  step: Plugin<GatewayContext, GatewayServerContext>;
  /**
   * The answer of a request whose operation is known in its form; undefined when yoga is to answer it
   * (not known, or its result has errors: then handed over in `run`).
   */
  answer(req: IncomingMessage, res: ServerResponse, state: RequestState, run: GraphQLRun): Promise<JsonAnswer | undefined> | undefined;
}

export function createKnownOperations(options: KnownOperationsOptions): KnownOperations {
  const { schema, endpoint, compiled, checks, costLimit } = options;
  const forms = new LRUCache<string, Known>({
    maxSize: Math.max(1, options.maxBytes),
    sizeCalculation: (_known, form) => 2 * form.length + 200,
  });
  // Accept values are few; a client making up new ones fills a bounded map, and is answered by yoga.
  const accepts = new LRUCache<string, { type: string | null }>({ max: 64 });
  const answerTypeOf = (req: IncomingMessage): string | null => {
    const accept = req.headers.accept ?? '';
    let known = accepts.get(accept);
    if (known === undefined) {
      known = { type: jsonAnswerType(accept) };
      accepts.set(accept, known);
    }
    return known.type;
  };

  const answerKnown = async (
    res: ServerResponse,
    state: RequestState,
    run: GraphQLRun,
    known: Known,
    body: GraphQLBody,
    type: string,
  ): Promise<JsonAnswer | undefined> => {
    const compiledRun = compiled.compiledOf(known.operation);
    if (compiledRun === undefined) return undefined;
    const context = options.context(state, run, res);
    const variables = (body.variables ?? null) as Record<string, unknown> | null;
    const plan = planRequest(schema, known.operation.document.document, known.operationName, variables, context);
    // Variables that do not coerce, a refused argument, a cost over the limit: yoga answers them.
    if (plan === null || plan.selection === null) return undefined;
    for (const check of checks) if (check(plan, context) !== undefined) return undefined;
    const result = await compiledRun(context, variables);
    if (result.errors !== undefined && result.errors.length > 0) {
      run.erredResult = { context, result };
      return undefined;
    }
    const { usage, source } = context;
    const data = JSON.stringify(result.data);
    const name = known.operation.name;
    return {
      status: 200,
      contentType: type,
      body: `{"data":${data},"extensions":${JSON.stringify(usageFigures(usage, costLimit))}}`,
      data,
      facts: {
        operation: known.operationName ?? name ?? null,
        documentName: name,
        type: 'query',
        errorCodes: [],
        usage: usage,
        keyAccepted: source.keyAccepted(),
      },
    };
  };

  return {
    answer(req, res, state, run) {
      if (state.traced || state.operationType === 'mutation' || state.operationType === 'subscription') return undefined;
      const body = bodyOf(req, state, endpoint);
      const form = body === undefined ? undefined : formOf(body);
      if (body === undefined || form === undefined) return undefined;
      // Whenever yoga runs it (here or later), the form is learned if it runs as a known operation can (`step`).
      run.form = form;
      const known = forms.get(form);
      const type = known === undefined ? null : answerTypeOf(req);
      if (known === undefined || type === null) return undefined;
      return answerKnown(res, state, run, known, body, type).catch((error: unknown) => {
        // A fault of this path, never of the request: yoga answers it (a read-only query, run again).
        options.onFault?.(error);
        run.erredResult = undefined;
        run.context = undefined;
        return undefined;
      });
    },
    step: {
      onExecute({ args, setExecuteFn }) {
        const context = args.contextValue as unknown as GatewayContext & GatewayServerContext;
        const { run } = context;
        const erredResult = run.erredResult;
        if (erredResult !== undefined) {
          run.erredResult = undefined;
          setExecuteFn(() => erredResult.result);
          return;
        }
        const planned = context.plan;
        const form = run.form;
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
