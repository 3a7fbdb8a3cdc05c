// What the live plugin makes of a poll's answer (graphql/plugins/use-live.ts), and the query a
// subscription's document is polled as.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { asQuery, pollOutcome } from '../../src/graphql/plugins/use-live.js';

const error = (code: string, extensions: Record<string, unknown> = {}) => ({ message: code, extensions: { code, ...extensions } });

describe('pollOutcome', () => {
  it('pushes data and errors, never the figures of the poll, and counts its upstream calls', () => {
    const outcome = pollOutcome({ data: { website: { id: '1' } }, extensions: { upstreamCalls: 3, cache: { hits: 1 } } });
    expect(outcome).toEqual({ result: { data: { website: { id: '1' } } }, upstreamCalls: 3, final: false });
  });

  it('ends the stream with NOT_FOUND, UNAUTHENTICATED or a refused document, and no data', () => {
    for (const code of ['NOT_FOUND', 'UNAUTHENTICATED', 'COST_LIMIT_EXCEEDED']) {
      const outcome = pollOutcome({ data: { website: null }, errors: [error(code)] as never });
      expect(outcome.final).toBe(true);
      expect(outcome.result.data).toBeUndefined();
      expect(outcome.result.errors?.map((each) => each.extensions?.code)).toEqual([code]);
      expect(outcome.endsKey === true).toBe(code === 'UNAUTHENTICATED');
    }
  });

  it("on a 429 waits its Retry-After and says the data is stale; a rate limit running low waits for the install's minute", () => {
    const limited = pollOutcome({ data: { website: null }, errors: [error('RATE_LIMITED', { retryAfter: 30 })] as never });
    expect(limited.final).toBe(false);
    expect(limited.backoffMs).toBe(30_000);
    expect(limited.result.extensions).toEqual({ stale: true });
    const low = pollOutcome({ data: { website: { id: '1' } }, extensions: { rateLimit: { limit: 60, remaining: 10 } } });
    expect(low.backoffMs).toBe(60_000);
    const plenty = pollOutcome({ data: { website: { id: '1' } }, extensions: { rateLimit: { limit: 60, remaining: 50 } } });
    expect(plenty.backoffMs).toBeUndefined();
  });
});

describe('asQuery', () => {
  it('polls the chosen subscription as a query, fragments on Subscription included, other operations left out', () => {
    const document = parse(`subscription Live($id: ID!) { ...Root }
      fragment Root on Subscription { website(id: $id) { id } }
      query Other { websites { totalCount } }`);
    const query = asQuery(document, 'Live');
    expect(query).toMatch(/^query Live\(\$id: ID!\)/);
    expect(query).toContain('fragment Root on Query');
    expect(query).not.toContain('Other');
  });
});
