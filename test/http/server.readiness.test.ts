// GET /ready: what a load balancer or Kubernetes takes a replica out of rotation by. It answers from the
// gateway's own state, never from the upstream's, and never waits in the admission line.
import { afterEach, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../fixture.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const QUERY = '{ websites { totalCount } }';

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('GET /ready', () => {
  it('answers 200 while serving, with the breaker and the store reported; HEAD has no body; /health unchanged', async () => {
    stack = await startStack();
    const ready = await fetch(`${stack.gateway.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect(await ready.json()).toEqual({ status: 'ready', upstreamBreaker: 'closed', store: 'off' });
    const head = await fetch(`${stack.gateway.url}/ready`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(stack.sandbox.log.count).toBe(0); // no upstream call
    expect((await fetch(`${stack.gateway.url}/health`)).status).toBe(200);
  });

  it('reports the in-memory store when the cache is on', async () => {
    stack = await startStack({ env: { CACHE: 'on' } });
    expect(await (await fetch(`${stack.gateway.url}/ready`)).json()).toMatchObject({ store: 'memory' });
  });

  it('stays 200 with the upstream down: the open breaker is reported, not decisive', async () => {
    stack = await startStack({ env: { UPSTREAM_MAX_ATTEMPTS: '1' }, sandbox: { faultRate: 1 } });
    const current = stack;
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 10 }, () => current.gql(QUERY)));
    const ready = await fetch(`${current.gateway.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', upstreamBreaker: 'open' });
  });

  it('answers at once when every slot and the line are taken (not through admission)', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0' }, sandbox: { latencyMs: 400 } });
    const current = stack;
    const first = current.gql(QUERY);
    await until(() => current.sandbox.log.inFlight === 1);
    expect((await current.gql(QUERY)).status).toBe(503); // the line is full...
    expect((await fetch(`${current.gateway.url}/ready`)).status).toBe(200); // ...and readiness is answered
    expect((await first).status).toBe(200);
  });

  it('turns 503 the moment drain starts, calls the onDraining listeners, and still serves during DRAIN_DELAY_MS', async () => {
    stack = await startStack({ env: { DRAIN_DELAY_MS: '300' } });
    const current = stack;
    let told = 0;
    current.gateway.onDraining(() => told++);
    const drained = current.gateway.drain();
    expect(told).toBe(1);
    const ready = await fetch(`${current.gateway.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    const served = await current.gql<{ websites: { totalCount: number } }>(QUERY);
    expect(served.status).toBe(200);
    expect(served.errors).toBeUndefined();
    await drained;
    expect(told).toBe(1);
    await expect(fetch(`${current.gateway.url}/ready`)).rejects.toThrow();
  });
});
