// One log line per GraphQL request: operation name, duration, upstream calls, cost, outcome. Built
// from an allow-list of fields, so headers (the key) and variables (passwords) can never reach it.
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import type { GatewayServerContext } from '../request-state.js';
import type { Planned } from '../../schema/plan.js';
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
}

const MAX_NAME_LENGTH = 100;

export function useRequestLog({ plan, write }: RequestLogOptions): Plugin<GatewayContext, GatewayServerContext> {
  const started = new WeakMap<Request, { at: number; operation: string | null }>();
  const nameFromDocument = (context: Planned & { request: Request }): void => {
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
    onResultProcess({ request, result, serverContext }) {
      const entry = started.get(request);
      if (!entry) return;
      started.delete(request);
      const results = Array.isArray(result) ? result : [result];
      const codes = results.flatMap((r) =>
        'errors' in r && r.errors ? r.errors.map((e) => String(e.extensions?.code ?? 'GRAPHQL_ERROR')) : [],
      );
      // The usage figures: requests refused before execution have no context. The trace id: use-tracing.ts.
      const { context, traceId } = serverContext.state ?? {};
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
