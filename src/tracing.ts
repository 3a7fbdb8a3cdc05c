// OpenTelemetry: the SDK, started by main.ts when config.ts says traces are wanted, and the upstream side
// of a trace (the client's and the cache's spans). Spans leave through a batch processor with a bounded
// queue: with the collector down spans are dropped, and no request waits on an export.
import type { IncomingMessage } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { type SettingsOf, text } from './settings.js';
import type { HttpMethod, UpstreamCallTrace } from './upstream/client.js';

export const DEFAULT_SERVICE_NAME = 'analytics-graphql-gateway';

/** The standard OTEL_* variables that decide whether traces are made (the SDK reads the others itself). */
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

export function tracingWanted({ endpoint, tracesEndpoint, exporter, disabled }: SettingsOf<typeof TRACING_SETTINGS>): boolean {
  if (disabled === 'true' || exporter === 'none') return false;
  return exporter !== null || endpoint !== null || tracesEndpoint !== null;
}

export interface Tracing {
  /** Exports what is queued (within the SDK's timeout) and stops. */
  shutdown(): Promise<void>;
}

/** What OTEL_TRACES_SAMPLER names, with OTEL_TRACES_SAMPLER_ARG as the ratio (default 1). */
const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/**
 * From the standard OTEL_* variables: OTLP over HTTP or the console; W3C trace context and baggage; the
 * specification's sampler, resource and batch settings; the gateway makes its own spans. Built from the
 * SDK's parts, not @opentelemetry/sdk-node, which also brings gRPC, logs and metrics exporters (and
 * protobufjs, whose install script npm lists on every install); loaded only with tracing on. Refuses a
 * setting it cannot honour (gRPC, an unknown exporter or sampler).
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  const value = (name: string): string | undefined => env[name]?.trim() || undefined;
  const protocol = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  const exporterName = value('OTEL_TRACES_EXPORTER') ?? 'otlp';
  const samplerName = value('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (exporterName !== 'otlp' && exporterName !== 'console') {
    throw new Error(`OTEL_TRACES_EXPORTER must be otlp, console or none, got "${exporterName}"`);
  }
  if (exporterName === 'otlp' && protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "${protocol}"`);
  }
  if (!SAMPLERS.includes(samplerName)) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${samplerName}"`);
  const ratio = Number(value('OTEL_TRACES_SAMPLER_ARG') ?? '1');
  if (samplerName.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) {
    throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${value('OTEL_TRACES_SAMPLER_ARG')}"`);
  }

  const [sdk, resources, core, { AsyncLocalStorageContextManager }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  let exporter: import('@opentelemetry/sdk-trace').SpanExporter;
  if (exporterName === 'console') exporter = new sdk.ConsoleSpanExporter();
  else if (protocol === 'http/json') exporter = new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  else exporter = new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  const positive = (name: string): number | undefined => {
    const number = Number(value(name));
    return Number.isFinite(number) && number >= 0 && value(name) !== undefined ? number : undefined;
  };
  const processor =
    exporterName === 'console'
      ? new sdk.SimpleSpanProcessor({ exporter })
      : new sdk.BatchSpanProcessor({
          exporter,
          maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE'),
          scheduledDelayMillis: positive('OTEL_BSP_SCHEDULE_DELAY'),
          exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT'),
          maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
        });
  const root = samplerName.endsWith('always_off')
    ? new sdk.AlwaysOffSampler()
    : samplerName.endsWith('traceidratio')
      ? new sdk.TraceIdRatioBasedSampler(ratio)
      : new sdk.AlwaysOnSampler();
  // The Node SDK's default detectors, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over them.
  const { detectResources, hostDetector, osDetector, processDetector, envDetector } = resources;
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [hostDetector, osDetector, processDetector] }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerName.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root,
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
  // A collector that is down when the gateway stops loses the last spans, never the exit code.
  return { shutdown: () => provider.shutdown().catch(() => undefined) };
}

const tracer = trace.getTracer(DEFAULT_SERVICE_NAME);

/** One upstream call (all its attempts), its context sent upstream in `traceparent`; route templates only: no id. */
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

export function recordCacheRead(result: 'hit' | 'miss' | 'stale'): void {
  trace.getActiveSpan()?.addEvent('cache.read', { 'cache.result': result });
}

/** The lone SERVER span of a stored answer, continuing the client's `traceparent`; its trace id. */
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
