// The request log, read from code and over GET/DELETE /__sandbox/log: what each /api/v1 request
// was, how it was answered, and how many were in flight at once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { RequestLogEntry, Sandbox } from '../../src/sandbox/index.js';
import { KEY_1, KEY_2, TODAY, call } from './http.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
});
afterEach(async () => {
  await sandbox.close();
});

interface LogBody {
  count: number;
  maxInFlight: number;
  inFlight: number;
  entries: RequestLogEntry[];
}

describe('request log', () => {
  it('records method, path, decoded query (last wins), headers, body and status', async () => {
    await call(sandbox, '/api/v1/websites?search=a%20b&per_page=25&per_page=50&sort=asc');
    await call(sandbox, '/api/v1/websites', { method: 'POST', key: KEY_2, form: { domain: 'logged.example.com', privacy: '1' } });
    await call(sandbox, '/api/v1/websites/3');
    expect(sandbox.log.count).toBe(3);
    const [list, store, show] = sandbox.log.entries;
    expect(list).toMatchObject({
      method: 'GET',
      path: '/api/v1/websites',
      query: { search: 'a b', per_page: '50', sort: 'asc' },
      body: '',
      status: 200,
    });
    expect(list?.headers.authorization).toBe(`Bearer ${KEY_1}`);
    expect(list?.headers.accept).toBe('application/json');
    expect(store).toMatchObject({
      method: 'POST',
      path: '/api/v1/websites',
      query: {},
      body: 'domain=logged.example.com&privacy=1',
      status: 201,
    });
    expect(store?.headers.authorization).toBe(`Bearer ${KEY_2}`);
    expect(store?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(show).toMatchObject({ method: 'GET', path: '/api/v1/websites/3', status: 404 });
    for (const entry of sandbox.log.entries) {
      expect(entry.endedAt).not.toBeNull();
      expect(entry.endedAt as number).toBeGreaterThanOrEqual(entry.startedAt);
    }
  });

  it('counts /api/v1 requests only, whatever their answer', async () => {
    await call(sandbox, '/api/v1/websites', { key: null }); // 401
    await call(sandbox, '/api/v1/nowhere'); // 404
    await call(sandbox, '/__sandbox/health');
    await call(sandbox, '/__sandbox/log');
    await call(sandbox, '/favicon.ico');
    expect(sandbox.log.count).toBe(2);
    expect(sandbox.log.entries.map((entry) => entry.status)).toEqual([401, 404]);
  });

  it('measures the most requests in flight at once', async () => {
    sandbox.setKnobs({ latencyMs: 400 });
    const burst = Array.from({ length: 8 }, (_, i) => call(sandbox, `/api/v1/websites/${i + 1}`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.log.inFlight).toBe(8);
    await Promise.all(burst);
    expect(sandbox.log.maxInFlight).toBe(8);
    expect(sandbox.log.inFlight).toBe(0);
    sandbox.log.reset();
    sandbox.setKnobs({ latencyMs: 0 });
    for (let i = 0; i < 3; i++) await call(sandbox, '/api/v1/websites');
    expect(sandbox.log.maxInFlight).toBe(1);
    expect(sandbox.log.count).toBe(3);
  });

  it('keeps the latest logLimit entries while counting them all', async () => {
    const small = await startSandbox({ today: TODAY, logLimit: 2 });
    try {
      for (const id of [1, 2, 4]) await call(small, `/api/v1/websites/${id}`);
      expect(small.log.count).toBe(3);
      expect(small.log.entries.map((entry) => entry.path)).toEqual(['/api/v1/websites/2', '/api/v1/websites/4']);
    } finally {
      await small.close();
    }
  });

  it('reset() clears entries, count and the peak', async () => {
    await call(sandbox, '/api/v1/websites');
    sandbox.log.reset();
    expect(sandbox.log.count).toBe(0);
    expect(sandbox.log.entries).toEqual([]);
    expect(sandbox.log.maxInFlight).toBe(0);
  });

  it('is served at GET /__sandbox/log and reset by DELETE /__sandbox/log', async () => {
    sandbox.setKnobs({ latencyMs: 200 });
    await Promise.all([
      call(sandbox, '/api/v1/websites?page=2'),
      call(sandbox, '/api/v1/websites/1', { method: 'PATCH', form: { favorite: '0' } }),
    ]);
    const reply = await call<LogBody>(sandbox, '/__sandbox/log', { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body.count).toBe(2);
    expect(reply.body.maxInFlight).toBe(2);
    expect(reply.body.inFlight).toBe(0);
    const paths = reply.body.entries.map((entry) => `${entry.method} ${entry.path}`).sort();
    expect(paths).toEqual(['GET /api/v1/websites', 'PATCH /api/v1/websites/1']);
    const patch = reply.body.entries.find((entry) => entry.method === 'PATCH');
    expect(patch).toMatchObject({ body: 'favorite=0', status: 200, query: {} });
    expect(reply.body.entries.find((entry) => entry.method === 'GET')?.query).toEqual({ page: '2' });
    expect(reply.body.entries).toEqual(JSON.parse(JSON.stringify(sandbox.log.entries)));

    const cleared = await call(sandbox, '/__sandbox/log', { method: 'DELETE', key: null });
    expect(cleared.status).toBe(204);
    expect(sandbox.log.count).toBe(0);
    expect((await call<LogBody>(sandbox, '/__sandbox/log')).body).toEqual({ count: 0, maxInFlight: 0, inFlight: 0, entries: [] });
  });
});

describe('control paths', () => {
  it('answers GET /__sandbox/health with the pinned window', async () => {
    const reply = await call(sandbox, '/__sandbox/health', { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'ok', today: TODAY, statsFrom: '2023-03-12' }); // TODAY - 1099 days
  });

  it('answers 404 for unknown control paths and 405 for wrong methods', async () => {
    expect((await call(sandbox, '/__sandbox/nope')).status).toBe(404);
    expect((await call(sandbox, '/__sandbox/log', { method: 'POST' })).status).toBe(405);
    expect((await call(sandbox, '/__sandbox/faults')).status).toBe(405);
    expect(sandbox.log.count).toBe(0);
  });

  it('gives the URL without a trailing slash and closes idempotently', async () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await sandbox.close();
    await sandbox.close();
    await expect(fetch(`${sandbox.url}/__sandbox/health`)).rejects.toThrow();
  });
});
