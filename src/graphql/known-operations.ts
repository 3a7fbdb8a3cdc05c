// Known operations: a query run compiled before, sent again in the same form, is answered in front of
// yoga: parsing, limits, validation and compilation were done the first times. Every answer that is not
// a plain success is yoga's own: a result with errors is handed to it (`erredResult`, so no upstream call
// is made twice); refusals, traces, other Accepts, @defer/@stream, @skip/@include go to yoga.
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
  endpoint: string;
  compiled: CompiledExecutionStep;
  checks: readonly PlanCheck[];
  costLimit: number;
  context: (state: RequestState, run: GraphQLRun, res: ServerResponse) => GatewayContext;
  /** Bytes of forms kept. */
  maxBytes: number;
  /** Yoga then answers. */
  onFault?: (error: unknown) => void;
}

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

/** `q<operationName>\n<text>`, or `h<operationName>\n<hash>` for a hash alone; undefined for anything else. */
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

/** A GET's parameters as yoga reads them; undefined when they do not parse. */
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

function bodyOf(req: IncomingMessage, state: RequestState, endpoint: string): GraphQLBody | undefined {
  const url = req.url ?? '';
  if (req.method === 'POST') return url === endpoint ? state.body() : undefined;
  return req.method === 'GET' && url.startsWith(endpoint) && url[endpoint.length] === '?' ? paramsOf(url) : undefined;
}

export interface KnownOperations {
  step: Plugin<GatewayContext, GatewayServerContext>;
  /** undefined when yoga is to answer (not known, or a result with errors, handed over in `run`). */
  answer(req: IncomingMessage, res: ServerResponse, state: RequestState, run: GraphQLRun): Promise<JsonAnswer | undefined> | undefined;
}

export function createKnownOperations(options: KnownOperationsOptions): KnownOperations {
  const { schema, endpoint, compiled, checks, costLimit } = options;
  const forms = new LRUCache<string, Known>({
    maxSize: Math.max(1, options.maxBytes),
    sizeCalculation: (_known, form) => 2 * form.length + 200,
  });
  // Accept values are few; a client making up new ones fills a bounded map, and is answered by yoga.
  const accepts = new LRUCache<string, { type: string | null }>({ max: 64, memoMethod: (accept) => ({ type: jsonAnswerType(accept) }) });
  const answerTypeOf = (req: IncomingMessage): string | null => accepts.memo(req.headers.accept ?? '').type;

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
      // Learned by `step` if yoga runs it as a known operation can.
      run.form = form;
      const known = forms.get(form);
      const type = known === undefined ? null : answerTypeOf(req);
      if (known === undefined || type === null) return undefined;
      return answerKnown(res, state, run, known, body, type).catch((error: unknown) => {
        // Yoga answers it: a read-only query, run again.
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
