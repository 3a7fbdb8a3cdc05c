// OpenTelemetry spans of a GraphQL request: a SERVER span continuing the client's `traceparent`, and the
// operation's with parse, validate and execute (the upstream calls' parent). The API only: without an
// SDK started every span is a no-op. No attribute holds a header, a document or a variable value.
import { type Context, type Span, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import type { GatewayServerContext } from '../context.js';
import type { PlanStep } from './use-plan.js';

interface RequestSpans {
  server: Span;
  operation: Span;
  operationContext: Context;
}

const tracer = trace.getTracer('analytics-graphql-gateway');

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/** Ends `span` once `run`'s result is settled, marking it failed when it threw. */
function endAfter<T>(span: Span, run: () => T): T {
  const failed = (error: unknown): never => {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw error;
  };
  let result: T;
  try {
    result = run();
  } catch (error) {
    return failed(error);
  }
  if (!(result instanceof Promise)) {
    span.end();
    return result;
  }
  return result.then((value: unknown) => {
    span.end();
    return value;
  }, failed) as T;
}

export function useTracing({ plan }: { plan: PlanStep }): Plugin<GatewayContext, GatewayServerContext> {
  const spans = new WeakMap<Request, RequestSpans>();
  const phase = (request: Request, name: string, wrapped: () => void): void => {
    const entry = spans.get(request);
    if (!entry) return wrapped();
    const span = tracer.startSpan(name, {}, entry.operationContext);
    return endAfter(span, () => context.with(trace.setSpan(entry.operationContext, span), wrapped));
  };
  return {
    instrumentation: {
      request({ request }, wrapped) {
        const parent = propagation.extract(context.active(), request.headers, headerGetter);
        const server = tracer.startSpan(
          `${request.method} /graphql`,
          { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': new URL(request.url).pathname } },
          parent,
        );
        const serverContext = trace.setSpan(parent, server);
        const operation = tracer.startSpan('graphql.operation', {}, serverContext);
        spans.set(request, { server, operation, operationContext: trace.setSpan(serverContext, operation) });
        return endAfter(server, () => endAfter(operation, () => context.with(serverContext, wrapped)));
      },
      parse: ({ context: { request } }, wrapped) => phase(request, 'graphql.parse', wrapped),
      validate: ({ context: { request } }, wrapped) => phase(request, 'graphql.validate', wrapped),
      execute: ({ context: { request } }, wrapped) => phase(request, 'graphql.execute', wrapped),
    },
    // For the log line.
    onRequest({ request, serverContext }) {
      const entry = spans.get(request);
      if (entry) serverContext.run.traceId = entry.server.spanContext().traceId;
    },
    onExecute({ args }) {
      const entry = spans.get(args.contextValue.request);
      const operation = plan.of(args.contextValue)?.operation;
      if (!entry || !operation) return;
      const { name, type } = operation;
      entry.operation.updateName(name === undefined ? type : `${type} ${name}`);
      entry.operation.setAttribute('graphql.operation.type', type);
      if (name !== undefined) entry.operation.setAttribute('graphql.operation.name', name);
    },
    onResultProcess({ request, result }) {
      const entry = spans.get(request);
      if (!entry) return;
      const results = Array.isArray(result) ? result : [result];
      if (results.some((one) => 'errors' in one && one.errors !== undefined && one.errors.length > 0)) {
        entry.operation.setStatus({ code: SpanStatusCode.ERROR });
      }
    },
    onResponse({ request, response }) {
      const entry = spans.get(request);
      if (!entry) return;
      entry.server.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) entry.server.setStatus({ code: SpanStatusCode.ERROR });
    },
  };
}
