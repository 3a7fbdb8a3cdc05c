// Latency, jitter, random 5xx and the per-key rate limit, set from code, from options and over
// the control API; they apply to /api/v1 only.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { KEY_2, TODAY, call } from './http.js';

let sandbox: Sandbox;
const start = async (options: SandboxOptions = {}) => {
  sandbox = await startSandbox({ port: 0, today: TODAY, ...options });
  return sandbox;
};
afterEach(async () => {
  await sandbox.close();
});

async function timed(path = '/api/v1/websites/1'): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const reply = await call(sandbox, path);
  return { ms: performance.now() - started, status: reply.status };
}

describe('latency and jitter', () => {
  it('delays every /api/v1 answer by latencyMs', async () => {
    await start({ latencyMs: 150 });
    const slow = await timed();
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(145);
    expect((await timed('/api/v1/nope')).ms).toBeGreaterThanOrEqual(145); // errors wait too
    // The control path waits for nothing: asked together, it is answered before the API.
    const order: string[] = [];
    const answered = (name: string) => () => void order.push(name);
    await Promise.all([
      call(sandbox, '/api/v1/websites/1').then(answered('api')),
      call(sandbox, '/__sandbox/health').then(answered('health')),
    ]);
    expect(order).toEqual(['health', 'api']);
    // At 0, the API waits for nothing either: asked after one held 300 ms, it is answered first.
    sandbox.setKnobs({ latencyMs: 0 });
    sandbox.scriptFaults([{ kind: 'delay', ms: 300 }]);
    order.length = 0;
    const held = call(sandbox, '/api/v1/websites/1').then(answered('held'));
    while (sandbox.log.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5)); // it took the fault
    const plain = await timed();
    order.push('plain');
    await held;
    expect(plain.status).toBe(200);
    expect(order).toEqual(['plain', 'held']);
  });

  it('works the answer out on arrival and sends it latencyMs after the request came in', async () => {
    // The latency stands for the network, not a queue: a write is applied when it arrives, so a
    // read arriving while the write's (here, delayed) answer is still on its way already sees it.
    await start({ latencyMs: 100 });
    sandbox.scriptFaults([{ kind: 'delay', ms: 300 }]);
    const started = performance.now();
    const create = call(sandbox, '/api/v1/websites', { method: 'POST', form: { domain: 'arrives-first.example' } }).then((reply) => ({
      status: reply.status,
      at: performance.now() - started,
    }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const list = await call<{ data: { domain: string }[] }>(sandbox, '/api/v1/websites?search=arrives-first');
    const listedAt = performance.now() - started;
    const created = await create;
    expect(list.body.data.map((website) => website.domain)).toEqual(['arrives-first.example']);
    expect(listedAt).toBeGreaterThanOrEqual(50 + 95);
    expect(created).toMatchObject({ status: 201 });
    expect(created.at).toBeGreaterThanOrEqual(395);
    expect(created.at).toBeGreaterThan(listedAt);
  });

  it('adds a uniform random [0, jitterMs) on top', async () => {
    await start({ latencyMs: 20, jitterMs: 80 });
    const times: number[] = [];
    for (let i = 0; i < 12; i++) times.push((await timed()).ms);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(19);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(10);
    expect(Math.max(...times)).toBeLessThan(20 + 80 + 200); // generous: a loaded CI machine
  });
});

describe('faultRate', () => {
  it('answers that share of /api/v1 requests with a 500 HTML page or a 503 JSON body', async () => {
    await start({ faultRate: 1 });
    const seen = new Map<number, { type: string | null; text: string }>();
    for (let i = 0; i < 30; i++) {
      const reply = await call(sandbox, '/api/v1/websites');
      seen.set(reply.status, { type: reply.headers.get('content-type'), text: reply.text });
    }
    expect([...seen.keys()].sort()).toEqual([500, 503]);
    expect(seen.get(500)?.type).toContain('text/html');
    expect(seen.get(500)?.text).toContain('<html');
    expect(seen.get(503)?.type).toBe('application/json');
    expect(JSON.parse(seen.get(503)?.text ?? '')).toEqual({ message: 'Service Unavailable' });
    expect((await call(sandbox, '/__sandbox/health')).status).toBe(200);
  });

  it('hits about the share asked for, and none when off', async () => {
    await start({ faultRate: 0.3 });
    let faults = 0;
    for (let i = 0; i < 200; i++) if ((await call(sandbox, '/api/v1/websites/1')).status >= 500) faults++;
    expect(faults).toBeGreaterThan(30);
    expect(faults).toBeLessThan(90);
    sandbox.setKnobs({ faultRate: 0 });
    for (let i = 0; i < 20; i++) expect((await call(sandbox, '/api/v1/websites/1')).status).toBe(200);
  });
});

describe('rateLimit', () => {
  it('answers 429 with Retry-After and X-RateLimit-* once a key has used its window', async () => {
    await start({ rateLimit: { limit: 3, windowMs: 1000 } });
    for (const remaining of ['2', '1', '0']) {
      const reply = await call(sandbox, '/api/v1/websites');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBe('3');
      expect(reply.headers.get('x-ratelimit-remaining')).toBe(remaining);
    }
    const limited = await call(sandbox, '/api/v1/websites');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Too Many Attempts.' });
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // Per key: the other user still has a full window.
    const other = await call(sandbox, '/api/v1/websites', { key: KEY_2 });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
    // Unauthenticated requests are refused before the limiter and do not use anyone's window.
    expect((await call(sandbox, '/api/v1/websites', { key: 'nope' })).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 1050));
    const again = await call(sandbox, '/api/v1/websites');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts every route and status, and gives Retry-After in whole seconds', async () => {
    await start({ rateLimit: { limit: 2, windowMs: 30_000 } });
    expect((await call(sandbox, '/api/v1/websites/999')).status).toBe(404);
    expect((await call(sandbox, '/api/v1/stats/1?name=x')).status).toBe(422);
    const limited = await call(sandbox, '/api/v1/websites/1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(29);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(30);
  });

  it('sends no rate-limit headers when off, and can be switched on and off', async () => {
    await start();
    expect((await call(sandbox, '/api/v1/websites')).headers.get('x-ratelimit-limit')).toBeNull();
    sandbox.setKnobs({ rateLimit: { limit: 1, windowMs: 60_000 } });
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(200);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(429);
    sandbox.setKnobs({ rateLimit: null });
    const free = await call(sandbox, '/api/v1/websites');
    expect(free.status).toBe(200);
    expect(free.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('setting knobs', () => {
  it('rejects bad values from code', async () => {
    await start();
    expect(() => sandbox.setKnobs({ faultRate: 2 })).toThrow(TypeError);
    expect(() => sandbox.setKnobs({ latencyMs: -1 })).toThrow('latencyMs must be a number >= 0');
    expect(() => sandbox.setKnobs({ rateLimit: { limit: 0, windowMs: 10 } })).toThrow('rateLimit.limit');
    await expect(startSandbox({ jitterMs: Number.NaN })).rejects.toThrow('jitterMs');
    await expect(startSandbox({ today: '2026-02-30' })).rejects.toThrow('today');
  });

  it('reads and writes them over HTTP at /__sandbox/knobs', async () => {
    await start();
    const initial = await call(sandbox, '/__sandbox/knobs', { key: null });
    expect(initial.body).toEqual({ latencyMs: 0, jitterMs: 0, faultRate: 0, rateLimit: null });
    const set = await call(sandbox, '/__sandbox/knobs', {
      method: 'PUT',
      key: null,
      json: { latencyMs: 60, rateLimit: { limit: 5, windowMs: 60_000 } },
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ latencyMs: 60, jitterMs: 0, faultRate: 0, rateLimit: { limit: 5, windowMs: 60_000 } });
    const reply = await timed();
    expect(reply.ms).toBeGreaterThanOrEqual(55);
    const limited = await call(sandbox, '/api/v1/websites');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('3');
    for (const bad of [{ faultRate: 1.5 }, { latencyMs: '10' }, { rateLimit: { limit: 1 } }, { latency: 5 }, [1]]) {
      const rejected = await call<{ message: string }>(sandbox, '/__sandbox/knobs', { method: 'PUT', key: null, json: bad });
      expect(rejected.status, JSON.stringify(bad)).toBe(400);
      expect(typeof rejected.body.message).toBe('string');
    }
    const garbage = await call(sandbox, '/__sandbox/knobs', { method: 'PUT', key: null, headers: { 'content-type': 'application/json' } });
    expect(garbage.status).toBe(400);
    expect((await call(sandbox, '/__sandbox/knobs', { key: null })).body).toMatchObject({ latencyMs: 60 });
  });
});
