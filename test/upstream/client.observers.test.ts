// What the client reports to metrics and traces (gateway.ts wires them): every attempt with its route
// template and status, and one traced call across its retries whose headers reach the install.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { UPSTREAM_TRANSPORT_DEFAULTS, createUpstreamClient, routeTemplate, type UpstreamClient } from '../../src/upstream/client.js';
import { KEY_1 } from '../fixture.js';

let sandbox: Sandbox;
let client: UpstreamClient;
const attempts: string[] = [];
const calls: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createUpstreamClient({
    ...UPSTREAM_TRANSPORT_DEFAULTS,
    url: sandbox.url,
    onAttemptDone: (request, route, status, seconds) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      attempts.push(`${request.method} ${route} ${status}`);
    },
    traceCall: (method, route) => ({
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      end: (tried, status, failed) => calls.push(`${method} ${route} attempts=${tried} status=${status} failed=${failed}`),
    }),
  });
});

afterAll(async () => {
  await client.close();
  await sandbox.close();
});

it('names routes by template, never by id', () => {
  expect(routeTemplate('/stats/42')).toBe('/api/v1/stats/{id}');
  expect(routeTemplate('/websites')).toBe('/api/v1/websites');
  expect(routeTemplate('/websites/7')).toBe('/api/v1/websites/{id}');
});

it('reports each attempt, and one traced call over its retries, sending its traceparent every time', async () => {
  sandbox.log.reset();
  sandbox.scriptFaults([
    { kind: 'status', status: 503 },
    { kind: 'status', status: 502 },
  ]);
  const response = await client.send({
    method: 'GET',
    path: '/websites/1',
    authorization: `Bearer ${KEY_1}`,
    deadline: Date.now() + 10_000,
  });
  expect(response.status).toBe(200);
  expect(attempts).toEqual(['GET /api/v1/websites/{id} 503', 'GET /api/v1/websites/{id} 502', 'GET /api/v1/websites/{id} 200']);
  expect(calls).toEqual(['GET /api/v1/websites/{id} attempts=3 status=200 failed=false']);
  expect(sandbox.log.entries.map((entry) => entry.headers.traceparent)).toEqual(
    Array.from({ length: 3 }, () => '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
  );
});

it('a failed call ends failed, with its last status', async () => {
  attempts.length = 0;
  calls.length = 0;
  await expect(
    client.send({ method: 'GET', path: '/websites/999999', authorization: `Bearer ${KEY_1}`, deadline: Date.now() + 10_000 }),
  ).rejects.toThrow();
  expect(calls).toEqual(['GET /api/v1/websites/{id} attempts=1 status=404 failed=true']);
});
