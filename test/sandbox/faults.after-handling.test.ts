// The afterHandling fault: the request is handled for real (auth, rate limit, the write applied)
// and only its answer is broken, so a client can be shown to have changed the store even though
// it could not read the 2xx that said so.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { KEY_1, TODAY, call } from './http.js';
import type { LegacyWireWebsite, WirePage, WireWebsite } from './http.js';

let sandbox: Sandbox;
const start = async (options: SandboxOptions = {}) => {
  sandbox = await startSandbox({ port: 0, today: TODAY, ...options });
  return sandbox;
};
afterEach(async () => {
  await sandbox.close();
});

const form = (fields: Record<string, string>) => ({
  headers: {
    authorization: `Bearer ${KEY_1}`,
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
  },
  body: new URLSearchParams(fields).toString(),
});
const domains = async (): Promise<string[]> =>
  (await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites?per_page=100')).body.data.map((website) => website.domain);
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('afterHandling', () => {
  it('malformed: a POST creates the website, and its 201 is not JSON', async () => {
    await start();
    sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'malformed' }]);
    const response = await fetch(`${sandbox.url}/api/v1/websites`, { method: 'POST', ...form({ domain: 'applied.example.com' }) });
    const text = await response.text();
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(await domains()).toContain('applied.example.com');
    // The next request is answered normally.
    expect((await call(sandbox, '/api/v1/websites/11')).status).toBe(200);
  });

  it('truncated: a PATCH is applied, and its 200 is its own JSON cut short with a matching content-length', async () => {
    await start();
    const whole = await call(sandbox, '/api/v1/websites/2', { method: 'PATCH', form: { email: '1' } });
    sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'truncated' }]);
    const response = await fetch(`${sandbox.url}/api/v1/websites/2`, { method: 'PATCH', ...form({ privacy: '1' }) });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text.length).toBeGreaterThan(10);
    expect(text.startsWith('{"data":{"id":2,')).toBe(true);
    expect(text.length).toBeLessThan(whole.text.length);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/2')).body.data).toMatchObject({ privacy: 1, email: 1 });
  });

  it('reset: a DELETE is applied, then the connection drops mid-body', async () => {
    await start();
    sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'reset' }]);
    const response = await fetch(`${sandbox.url}/api/v1/websites/2`, { method: 'DELETE', headers: { authorization: `Bearer ${KEY_1}` } });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    await settle();
    expect(sandbox.log.entries[0]?.status).toBe(0);
    expect((await call(sandbox, '/api/v1/websites/2')).status).toBe(404);
  });

  it('keeps the status of an error, and checks the key first', async () => {
    await start();
    sandbox.scriptFaults([
      { kind: 'afterHandling', answer: 'malformed' },
      { kind: 'afterHandling', answer: 'malformed' },
    ]);
    const unauthenticated = await call(sandbox, '/api/v1/websites', { method: 'POST', key: null, form: { domain: 'nope.example.com' } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toBeUndefined(); // not JSON
    const invalid = await call(sandbox, '/api/v1/websites', { method: 'POST', form: { domain: 'acme-analytics.com' } });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toBeUndefined();
    expect(await domains()).not.toContain('nope.example.com');
  });

  it('is handled whatever faultRate says', async () => {
    await start({ faultRate: 1 });
    sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'malformed' }]);
    const response = await fetch(`${sandbox.url}/api/v1/websites`, { method: 'POST', ...form({ domain: 'lucky.example.com' }) });
    expect(response.status).toBe(201);
    sandbox.setKnobs({ faultRate: 0 });
    expect(await domains()).toContain('lucky.example.com');
  });

  it('breaks the older install’s answers too, after the write', async () => {
    await start({ dialect: 'legacy' });
    sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'truncated' }]);
    const response = await fetch(`${sandbox.url}/api/v1/websites`, {
      method: 'POST',
      ...form({ domain: 'old.example.com', privacy: '1' }),
    });
    expect(response.status).toBe(201);
    const text = await response.text();
    expect(text.startsWith('{"data":{"id":11,"domain":"old.example.com","privacy":"1"')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    const created = await call<{ data: LegacyWireWebsite }>(sandbox, '/api/v1/websites/11');
    expect(created.body.data).toMatchObject({ domain: 'old.example.com', privacy: 1 });
  });

  it('can be scripted over HTTP, and a bad answer is refused', async () => {
    await start();
    const queued = await call(sandbox, '/__sandbox/faults', {
      method: 'POST',
      key: null,
      json: [{ kind: 'afterHandling', answer: 'malformed' }],
    });
    expect(queued.status).toBe(204);
    const broken = await call(sandbox, '/api/v1/websites/1');
    expect(broken.status).toBe(200);
    expect(broken.body).toBeUndefined();
    for (const bad of [[{ kind: 'afterHandling' }], [{ kind: 'afterHandling', answer: 'hang' }]]) {
      const reply = await call<{ message: string }>(sandbox, '/__sandbox/faults', { method: 'POST', key: null, json: bad });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('answer');
    }
    expect(() => sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'slow' as 'reset' }])).toThrow(TypeError);
    expect((await call(sandbox, '/api/v1/websites/1')).status).toBe(200);
  });

  it('drops the faults not served yet on DELETE', async () => {
    await start();
    const unavailable = [{ kind: 'status', status: 503 }];
    expect((await call(sandbox, '/__sandbox/faults', { method: 'POST', key: null, json: [...unavailable, ...unavailable] })).status).toBe(
      204,
    );
    expect((await call(sandbox, '/api/v1/websites/1')).status).toBe(503);
    expect((await call(sandbox, '/__sandbox/faults', { method: 'DELETE', key: null })).status).toBe(204);
    // The second 503 was dropped.
    expect((await call(sandbox, '/api/v1/websites/1')).status).toBe(200);
  });
});
