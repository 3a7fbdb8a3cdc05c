// Tracing's start: what the standard OTEL_* variables may say, and a clear refusal of what the gateway
// does not do (the spans themselves: test/graphql/plugins/use-tracing*.test.ts).
import { describe, expect, it } from 'vitest';
import { startTracing } from '../src/tracing.js';

describe('startTracing', () => {
  it.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "grpc"'],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER must be otlp, console or none, got "zipkin"'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, 'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "2"'],
  ])('refuses %o in one line', async (env, message) => {
    await expect(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', ...env })).rejects.toThrow(message);
  });
});
