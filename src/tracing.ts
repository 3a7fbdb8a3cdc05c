// OpenTelemetry: the SDK, started by main.ts when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER
// is set (config.ts decides), and the upstream side of a trace that gateway.ts hands to the client and
// the cache. The SDK reads the standard OTEL_* variables itself (service name, exporter and protocol,
// http/json or http/protobuf, batch settings, sampler). Spans leave through a batch processor with a
// bounded queue: with the collector down spans are dropped, and no request waits on an export.
import type { IncomingMessage } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { type SettingsOf, text } from './settings.js';
import type { HttpMethod, UpstreamCallTrace } from './upstream/client.js';

export const DEFAULT_SERVICE_NAME = 'analytics-graphql-gateway';

/**
 * The standard OTEL_* variables that decide whether traces are made (the SDK reads them, and the others,
 * itself): set, an endpoint or an exporter turns tracing on.
 */
export const TRACING_SETTINGS = {
  endpoint: text('OTEL_EXPORTER_OTLP_ENDPOINT', { fallback: null, unit: 'URL', doc: 'the collector; set, it turns tracing on' }),
  tracesEndpoint: text('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', {
    fallback: null,
    unit: 'URL',
    doc: 'the collector for traces alone; set, it turns tracing on',
  }),
  exporter: text('OTEL_TRACES_EXPORTER', { fallback: null, unit: 'name', doc: 'set, it turns tracing on; none turns it off' }),
  disabled: text('OTEL_SDK_DISABLED', { fallback: 'false', unit: 'boolean', doc: 'true turns tracing off' }),
  serviceName: text('OTEL_SERVICE_NAME', { fallback: DEFAULT_SERVICE_NAME, unit: 'name', doc: 'the service name of every span' }),
};

/** Whether the OTEL_* settings ask for traces. */
export function tracingWanted({ endpoint, tracesEndpoint, exporter, disabled }: SettingsOf<typeof TRACING_SETTINGS>): boolean {
  if (disabled === 'true' || exporter === 'none') return false;
  return exporter !== null || endpoint !== null || tracesEndpoint !== null;
}

export interface Tracing {
  /** Exports what is queued (within the SDK's timeout) and stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK for this process; no instrumentation of other libraries: the gateway makes its own
 * spans. Loaded only then: with tracing off the gateway never loads the SDK and its exporters.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({ ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: DEFAULT_SERVICE_NAME }), instrumentations: [] });
  sdk.start();
  // A collector that is down when the gateway stops loses the last spans, never the exit code.
  return { shutdown: () => sdk.shutdown().catch(() => undefined) };
}

const tracer = trace.getTracer(DEFAULT_SERVICE_NAME);

/**
 * A CLIENT span for one upstream call (all its attempts), child of what is active (the operation's
 * execute span), whose context goes to the upstream in `traceparent`. Route templates only: no id.
 */
export function traceUpstreamCall(method: HttpMethod, route: string): UpstreamCallTrace {
  const span = tracer.startSpan(`${method} ${route}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': method, 'url.template': route },
  });
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return {
    headers,
    end(attempts, status, failed) {
      span.setAttribute('gateway.upstream.attempts', attempts);
      if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
      else if (status === 'error') span.setAttribute('error.type', 'no answer');
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}

/** A cache read as an event of the active span (the operation's execute span). */
export function recordCacheRead(result: 'hit' | 'miss' | 'stale'): void {
  trace.getActiveSpan()?.addEvent('cache.read', { 'cache.result': result });
}

/**
 * The SERVER span of a request answered with a stored answer (cache/stored-answers.ts), which continues
 * the client's `traceparent` as use-tracing.ts's do; nothing of GraphQL ran, so it is alone. Its trace id.
 */
export function traceStoredAnswer(req: IncomingMessage, status: number, startedAt: number): string {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer.startSpan(
    `${req.method} /graphql`,
    {
      kind: SpanKind.SERVER,
      startTime: performance.timeOrigin + startedAt,
      attributes: { 'http.request.method': req.method ?? '', 'url.path': '/graphql', 'gateway.stored_answer': true },
    },
    parent,
  );
  span.setAttribute('http.response.status_code', status);
  span.end();
  return span.spanContext().traceId;
}
