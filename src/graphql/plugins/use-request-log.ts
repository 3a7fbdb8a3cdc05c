// One log line per GraphQL request: operation name, duration, upstream calls, cost, outcome. Built
// from an allow-list of fields, so headers (the key) and variables (passwords) can never reach it.
// Written through one pino child per operation name (RequestLog): the name is written into the child's
// bindings once, and each line adds only its figures.
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
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
  /** Sent from its stored answer (cache/stored-answers.ts), before GraphQL ran. */
  storedAnswer?: true;
  /** The request's OpenTelemetry trace id, when tracing is on. */
  trace_id?: string | undefined;
}

/** A line's figures: all but the operation's name. */
export type RequestLogFields = Omit<RequestLogLine, 'operation'>;

/** Where request lines go: the gateway's RequestLog, a test's array. */
export interface RequestLogWriter {
  write(operation: string | null, fields: RequestLogFields): void;
}

export interface RequestLogOptions {
  /** The request's plan, for the operation's name. Required. */
  plan: PlanStep;
  /** Where each line goes. Required. */
  log: RequestLogWriter;
}

const MAX_NAME_LENGTH = 100;
/** Operation names with a child logger of their own; names past it (a client making up names) share the least recent's fate. */
const MAX_NAMED_LOGGERS = 1_000;

/** The request log: `graphql request` lines at info, each operation's name bound once in a pino child. */
export class RequestLog implements RequestLogWriter {
  private readonly named = new LRUCache<string, Logger>({ max: MAX_NAMED_LOGGERS });
  private readonly anonymous: Logger;

  constructor(private readonly logger: Logger) {
    this.anonymous = logger.child({ operation: null });
  }

  write(operation: string | null, fields: RequestLogFields): void {
    let child = this.anonymous;
    if (operation !== null) {
      const name = operation.length > MAX_NAME_LENGTH ? operation.slice(0, MAX_NAME_LENGTH) : operation;
      child = this.named.get(name) ?? this.bind(name);
    }
    child.info(fields, 'graphql request');
  }

  /** A fault of the gateway's own while answering (the request is answered another way). */
  fault(error: unknown): void {
    this.logger.error({ err: error }, 'known operation path failed');
  }

  private bind(name: string): Logger {
    const child = this.logger.child({ operation: name });
    this.named.set(name, child);
    return child;
  }
}

export function useRequestLog({ plan, log }: RequestLogOptions): Plugin<GatewayContext, GatewayServerContext> {
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
      log.write(entry.operation, {
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
