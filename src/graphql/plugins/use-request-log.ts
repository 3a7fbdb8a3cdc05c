// One log line per GraphQL request: operation name, duration, upstream calls, cost, outcome. Built
// from an allow-list of fields, so headers (the key) and variables (passwords) can never reach it.
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import type { PlanStep } from './use-plan.js';

export interface RequestLogLine {
  operation: string | null;
  durationMs: number;
  upstreamCalls: number;
  cost: number | null;
  cache: { hits: number; misses: number; stale: number };
  outcome: 'ok' | 'error';
  errorCodes?: string[];
  /** The request's OpenTelemetry trace id, when tracing is on. */
  trace_id?: string;
}

export interface RequestLogOptions {
  /** The request's plan, for the operation's name. Required. */
  plan: PlanStep;
  /** Where each line goes (the gateway passes pino's `info`). Required. */
  write: (line: RequestLogLine) => void;
  /** The request's context, for its usage figures; requests refused before execution have none. */
  contextOf: (request: Request) => GatewayContext | undefined;
  /** The request's trace id (use-tracing.ts); none when tracing is off. */
  traceIdOf?: (request: Request) => string | undefined;
}

const MAX_NAME_LENGTH = 100;

export function useRequestLog({ plan, write, contextOf, traceIdOf }: RequestLogOptions): Plugin<GatewayContext> {
  const started = new WeakMap<Request, { at: number; operation: string | null }>();
  const nameFromDocument = (context: { request: Request }): void => {
    const entry = started.get(context.request);
    const name = plan.of(context)?.operation.name;
    if (entry && entry.operation === null && name !== undefined) entry.operation = name.slice(0, MAX_NAME_LENGTH);
  };
  return {
    onRequest({ request }) {
      started.set(request, { at: performance.now(), operation: null });
    },
    onParams({ request, params }) {
      const entry = started.get(request);
      if (entry && typeof params.operationName === 'string') entry.operation = params.operationName.slice(0, MAX_NAME_LENGTH);
    },
    // A document with one named operation names it, whether or not the client sent operationName.
    onExecute({ args }) {
      nameFromDocument(args.contextValue);
    },
    // A subscription's line is written when its stream opens; its polls have lines of their own (use-live.ts).
    onSubscribe({ args }) {
      nameFromDocument(args.contextValue);
    },
    onResultProcess({ request, result }) {
      const entry = started.get(request);
      if (!entry) return;
      started.delete(request);
      const results = Array.isArray(result) ? result : [result];
      const codes = results.flatMap((r) =>
        'errors' in r && r.errors ? r.errors.map((e) => String(e.extensions?.code ?? 'GRAPHQL_ERROR')) : [],
      );
      const context = contextOf(request);
      const traceId = traceIdOf?.(request);
      write({
        operation: entry.operation,
        durationMs: Math.round((performance.now() - entry.at) * 100) / 100,
        upstreamCalls: context?.usage.upstreamCalls ?? 0,
        cost: context?.usage.cost ?? null,
        cache: { hits: context?.usage.cache.hits ?? 0, misses: context?.usage.cache.misses ?? 0, stale: context?.usage.cache.stale ?? 0 },
        outcome: codes.length === 0 ? 'ok' : 'error',
        ...(codes.length > 0 ? { errorCodes: [...new Set(codes)] } : {}),
        trace_id: traceId,
      });
    },
  };
}
