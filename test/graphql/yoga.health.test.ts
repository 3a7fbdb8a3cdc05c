// Only /health answers as the health check on the gateway's port: yoga's own check answers any URL
// that ends with its endpoint, and must answer none (the sandbox's /__sandbox/health is the sandbox's,
// on its own port).
import { describe, expect, it } from 'vitest';
import { useStack } from '../fixture.js';

describe("the gateway's health check", () => {
  const stack = useStack();

  it('answers /health, and no other path that ends with /health', async () => {
    const health = await fetch(`${stack.gateway.url}/health`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    for (const path of ['/__sandbox/health', '/foo/health', '/graphql/health', '/health/health', '/x?y=/health']) {
      const response = await fetch(`${stack.gateway.url}${path}`);
      await response.arrayBuffer();
      expect([path, response.status, response.headers.get('x-yoga-id')]).toEqual([path, 404, null]);
    }
  });
});
