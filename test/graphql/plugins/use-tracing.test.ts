// Traces as a collector receives them: the SDK started as main.ts starts it, exporting OTLP http/json
// to a receiver in this test (node:http), and the sandbox recording the traceparent it is sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../../src/tracing.js';
import { KEY_1, type Stack, postGraphQL, startStack } from '../../fixture.js';
import { postToMcp } from '../../mcp/post.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  events?: { name: string; attributes?: { key: string; value: OtlpValue }[] }[];
}
interface OtlpExport {
  resourceSpans: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const SERVER = 2;
const CLIENT = 3;
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

let receiver: Server;
const exports: { contentType: string; body: OtlpExport }[] = [];
let tracing: Tracing;
let stack: Stack;
const logLines: Record<string, unknown>[] = [];

const spans = (): OtlpSpan[] => exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
const attribute = (span: OtlpSpan | undefined, key: string): unknown => {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? value?.boolValue : Number(value.intValue));
};

async function spansOf(traceId: string, atLeast: number): Promise<OtlpSpan[]> {
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    const found = spans().filter((span) => span.traceId === traceId);
    if (found.length >= atLeast) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return spans().filter((span) => span.traceId === traceId);
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        exports.push({ contentType: req.headers['content-type'] ?? '', body: JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // The SDK reads the process's environment, as in production.
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_BSP_MAX_QUEUE_SIZE: '64',
    OTEL_SERVICE_NAME: 'gateway-under-test',
  });
  tracing = await startTracing();
  const logger = pino(
    { base: null },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  stack = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, CACHE: 'on', LOG_LEVEL: 'info' }, gateway: { logger } });
});

afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

describe('OpenTelemetry traces', () => {
  it("continue the client's traceparent: server span, operation span with parse/validate/execute, one CLIENT span per upstream call whose context reaches the install", async () => {
    const query =
      'query Dashboard($id: ID!) { website(id: $id) { id domain visitors: stats(name: VISITOR, period: LAST_7_DAYS) { totalCount } } }';
    const response = await postGraphQL<unknown>(
      stack.endpoint,
      { query, variables: { id: '1' } },
      { authorization: `Bearer ${KEY_1}`, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    );
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    const upstreamCalls = stack.sandbox.log.entries.filter((e) => e.path.startsWith('/api/v1/'));
    expect(upstreamCalls.length).toBeGreaterThan(0);

    const found = await spansOf(CLIENT_TRACE, 5 + upstreamCalls.length);
    expect(exports[0]?.contentType).toContain('application/json');
    expect(exports[0]?.body.resourceSpans[0]?.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue).toBe(
      'gateway-under-test',
    );
    const server = found.find((span) => span.kind === SERVER);
    expect(server?.parentSpanId).toBe(CLIENT_SPAN);
    expect(attribute(server, 'http.response.status_code')).toBe(200);
    const operation = found.find((span) => span.name === 'query Dashboard');
    expect(operation?.parentSpanId).toBe(server?.spanId);
    expect(attribute(operation, 'graphql.operation.name')).toBe('Dashboard');
    expect(attribute(operation, 'graphql.operation.type')).toBe('query');
    const phases = found.filter((span) => span.parentSpanId === operation?.spanId).map((span) => span.name);
    expect(phases.sort()).toEqual(['graphql.execute', 'graphql.parse', 'graphql.validate']);
    const execute = found.find((span) => span.name === 'graphql.execute');
    expect(execute?.events?.map((e) => e.name)).toContain('cache.read');

    const clients = found.filter((span) => span.kind === CLIENT);
    expect(clients.length).toBe(upstreamCalls.length);
    for (const client of clients) {
      expect(client.parentSpanId).toBe(execute?.spanId);
      expect(attribute(client, 'http.request.method')).toBe('GET');
      expect(attribute(client, 'url.template')).toMatch(/^\/api\/v1\/(websites|stats)\/\{id\}$/);
      expect(attribute(client, 'http.response.status_code')).toBe(200);
      expect(attribute(client, 'gateway.upstream.attempts')).toBe(1);
    }
    // The install was sent each CLIENT span's own context.
    const sent = upstreamCalls.map((call) => call.headers.traceparent).sort();
    expect(sent).toEqual(clients.map((client) => `00-${CLIENT_TRACE}-${client.spanId}-01`).sort());

    // No key, no variable value, no id in any attribute or event.
    const text = JSON.stringify(found.map((span) => [span.name, span.attributes, span.events]));
    expect(text).not.toContain(KEY_1);
    expect(text).not.toContain('Bearer');
    expect(text).not.toMatch(/websites\/1|stats\/1/);

    const line = logLines.find((l) => l.msg === 'graphql request' && l.trace_id === CLIENT_TRACE);
    expect(line?.operation).toBe('Dashboard');
  });

  it("continue an MCP client's traceparent into its tool call's operation", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const span = '00f067aa0ba902b7';
    const answer = await postToMcp(
      stack.gateway.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_website', arguments: { websiteId: '1' } } },
      { authorization: `Bearer ${KEY_1}`, traceparent: `00-${trace}-${span}-01` },
    );
    expect(answer.status).toBe(200);
    const found = await spansOf(trace, 2);
    expect(found.find((each) => each.kind === SERVER)?.parentSpanId).toBe(span);
    expect(found.map((each) => each.name)).toContain('query GetWebsite');
  });

  it('gives every request a trace id in its log line, and answers as before with the collector down', async () => {
    await new Promise<void>((resolve) => {
      receiver.closeAllConnections();
      receiver.close(() => resolve());
    });
    const before = logLines.length;
    for (let i = 0; i < 3; i++) {
      const response = await postGraphQL<{ websites: { totalCount: number } }>(
        stack.endpoint,
        { query: '{ websites { totalCount } }' },
        { authorization: `Bearer ${KEY_1}` },
      );
      expect(response.status).toBe(200);
      expect(response.data?.websites.totalCount).toBeGreaterThan(0);
    }
    const lines = logLines.slice(before).filter((l) => l.msg === 'graphql request');
    expect(lines.length).toBe(3);
    for (const line of lines) expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(lines.map((l) => l.trace_id)).size).toBe(3);
  });
});
