import { describe, expect, it } from 'vitest';
import { useUsageExtensions } from '../../../src/graphql/plugins/use-usage-extensions.js';
import { post, tinyYoga } from './yoga.js';

describe('useUsageExtensions', () => {
  const yoga = tinyYoga([useUsageExtensions({ costLimit: 42 })]);

  it('reports the upstream calls, the cost and the install\'s rate limit', async () => {
    const { json } = await post(yoga, { query: '{ calls }' });
    expect(json.data).toEqual({ calls: 2 });
    expect(json.extensions).toEqual({
      cost: { requested: null, limit: 42 },
      upstreamCalls: 2,
      cache: { hits: 0, misses: 0, stale: 0 },
      rateLimit: { limit: 60, remaining: 57 },
    });
  });

  it('leaves rateLimit out when the install said nothing of it', async () => {
    const { json } = await post(yoga, { query: '{ hello }' });
    expect(json.extensions).toEqual({ cost: { requested: null, limit: 42 }, upstreamCalls: 0, cache: { hits: 0, misses: 0, stale: 0 } });
  });

  it('defaults the reported limit to 100', async () => {
    const { json } = await post(tinyYoga([useUsageExtensions()]), { query: '{ hello }' });
    expect(json.extensions?.cost).toEqual({ requested: null, limit: 100 });
  });
});
