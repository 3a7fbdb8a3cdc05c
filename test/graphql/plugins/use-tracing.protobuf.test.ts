// OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (the SDK's default) reaches the collector as protobuf:
// the receiver checks the content type and finds the client's trace id, as its 16 bytes, in the body.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../../src/tracing.js';
import { KEY_1, type Stack, postGraphQL, startStack } from '../../fixture.js';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

let receiver: Server;
const bodies: { contentType: string; body: Buffer }[] = [];
let tracing: Tracing;
let stack: Stack;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  tracing = await startTracing();
  stack = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
});

afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

it('exports spans as OTLP protobuf', async () => {
  const response = await postGraphQL<unknown>(
    stack.endpoint,
    { query: '{ websites { totalCount } }' },
    { authorization: `Bearer ${KEY_1}`, traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01` },
  );
  expect(response.status).toBe(200);
  const traceBytes = Buffer.from(CLIENT_TRACE, 'hex');
  const route = Buffer.from('GET /api/v1/websites');
  // The trace's spans may come in more than one batch: wait for the one holding the upstream call's span.
  const carrying = () => bodies.filter((b) => b.body.includes(traceBytes));
  for (const until = Date.now() + 10_000; Date.now() < until && !carrying().some((b) => b.body.includes(route)); ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(carrying().length).toBeGreaterThan(0);
  for (const batch of carrying()) expect(batch.contentType).toBe('application/x-protobuf');
  expect(carrying().some((b) => b.body.includes(route))).toBe(true);
});
