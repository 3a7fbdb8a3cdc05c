// The cost limit against the real schema (its fields declare their costs), in-process: an operation
// over the limit is refused before any resolver runs, so the context needs no upstream at all.
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { Usage } from '../../../src/schema/context.js';
import { useCostLimit } from '../../../src/graphql/plugins/use-cost-limit.js';
import { usePlan } from '../../../src/graphql/plugins/use-plan.js';
import { schema } from '../../../src/schema/index.js';

function yogaWithLimit(limit?: number) {
  const usages: Usage[] = [];
  const yoga = createYoga({
    schema,
    logging: false,
    maskedErrors: false,
    context: () => {
      const usage: Usage = { upstreamCalls: 0, cost: null, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
      usages.push(usage);
      return { usage };
    },
    plugins: [usePlan([useCostLimit(limit === undefined ? {} : { limit })])],
  });
  return { yoga, usages };
}

async function run(yoga: ReturnType<typeof yogaWithLimit>['yoga'], query: string, variables: Record<string, unknown> = {}) {
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  };
}

const SPARKLINES =
  'query($n: Int) { websites(perPage: $n) { nodes { stats(name: VISITOR, from: "2026-01-01", to: "2026-01-31") { totalCount } } } }';

describe('useCostLimit', () => {
  it('refuses an operation over the limit before anything runs, with both figures', async () => {
    const { yoga, usages } = yogaWithLimit(20);
    const json = await run(yoga, SPARKLINES, { n: 25 });
    expect(json.data).toBeUndefined();
    expect(json.errors).toEqual([
      {
        message:
          'This operation could make 26 calls to the analytics service; the limit is 20. Ask for fewer or smaller pages, or split it into several requests.',
        extensions: { code: 'COST_LIMIT_EXCEEDED', cost: 26, costLimit: 20 },
      },
    ]);
    expect(json.extensions).toEqual({ cost: { requested: 26, limit: 20 }, upstreamCalls: 0 });
    expect(usages[0]?.cost).toBe(26);
  });

  it('lets an operation at the limit through to execution, with its cost recorded', async () => {
    const { yoga, usages } = yogaWithLimit(11);
    const json = await run(yoga, SPARKLINES, { n: 10 });
    // Execution starts (and fails here, with no loaders in this context): the limit did not refuse it.
    expect(json.errors?.[0]?.extensions?.code).not.toBe('COST_LIMIT_EXCEEDED');
    expect(usages[0]?.cost).toBe(11);
  });

  it('defaults to 100', async () => {
    const { yoga } = yogaWithLimit();
    const json = await run(yoga, SPARKLINES, { n: 100 });
    expect(json.errors?.[0]?.extensions).toEqual({ code: 'COST_LIMIT_EXCEEDED', cost: 101, costLimit: 100 });
  });

  it('leaves bad variables to execution, which refuses them', async () => {
    const { yoga, usages } = yogaWithLimit(5);
    const json = await run(yoga, SPARKLINES, { n: 'many' });
    expect(json.errors?.[0]?.message).toContain('Variable "$n"');
    expect(usages[0]?.cost).toBeNull();
  });
});
