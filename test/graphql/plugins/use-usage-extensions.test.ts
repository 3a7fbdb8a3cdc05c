import { describe, expect, it } from 'vitest';
import type { GatewayContext, Usage } from '../../../src/schema/context.js';
import { useUsageExtensions } from '../../../src/graphql/plugins/use-usage-extensions.js';
import { contextFor, post, tinyYoga } from './yoga.js';

const NOTHING_RAN = { cost: { requested: 0, limit: 42 }, upstreamCalls: 0, cache: { hits: 0, misses: 0, stale: 0 } };

describe('useUsageExtensions', () => {
  const yoga = tinyYoga([useUsageExtensions({ costLimit: 42 })]);

  it("reports the upstream calls, the cost and the install's rate limit", async () => {
    const { json } = await post(yoga, { query: '{ calls }' });
    expect(json.data).toEqual({ calls: 2 });
    expect(json.extensions).toEqual({
      cost: { requested: 0, limit: 42 },
      upstreamCalls: 2,
      cache: { hits: 0, misses: 0, stale: 0 },
      rateLimit: { limit: 60, remaining: 57 },
    });
  });

  it('leaves rateLimit out when the install said nothing of it', async () => {
    const { json } = await post(yoga, { query: '{ hello }' });
    expect(json.extensions).toEqual(NOTHING_RAN);
  });

  it('defaults the reported limit to 100', async () => {
    const { json } = await post(tinyYoga([useUsageExtensions()]), { query: '{ hello }' });
    expect(json.extensions?.cost).toEqual({ requested: 0, limit: 100 });
  });

  it.each([
    ['a document that does not parse', { query: '{ hello' }],
    ['a document validation refuses', { query: '{ nope }' }],
    ['a request with no document', { variables: {} }],
  ])('gives the figures, all zero, to %s', async (_title, body) => {
    const { response, json } = await post(yoga, body, { accept: 'application/graphql-response+json' });
    expect(response.status).toBe(400);
    expect(json.errors?.length).toBeGreaterThan(0);
    expect(json.extensions).toEqual(NOTHING_RAN);
  });

  it("reads the figures of an answer execution did not give from the request's context, in its run", async () => {
    const usage: Usage = { upstreamCalls: 3, cost: 4, rateLimit: null, cache: { hits: 1, misses: 2, stale: 0, freshForS: null } };
    const serverContext = contextFor('Bearer k');
    serverContext.run.context = { usage } as GatewayContext;
    const { json } = await post(yoga, { query: '{ hello' }, {}, serverContext);
    expect(json.extensions).toEqual({ cost: { requested: 4, limit: 42 }, upstreamCalls: 3, cache: { hits: 1, misses: 2, stale: 0 } });
  });
});
