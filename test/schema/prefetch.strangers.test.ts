// The look-ahead spends nothing on a stranger, over real HTTP: statistics start with their website only
// for a key the install accepted lately (http/known-keys.ts); a made-up key's request makes the one call
// that shows it refused, and a new key's first request reads the website before its statistics.
import { describe, expect, it } from 'vitest';
import { KEY_1, dataOf, firstError, restCalls, useStack } from '../fixture.js';

const stack = useStack({ sandbox: { latencyMs: 200 } });

const DASHBOARD = `{ website(id: "1") { id
  countries: stats(name: COUNTRY, from: "2026-02-14", to: "2026-03-14") { totalCount }
  pages: stats(name: PAGE, from: "2026-02-14", to: "2026-03-14") { totalCount } } }`;

describe('the look-ahead and strangers', () => {
  it("makes one upstream call for a made-up key's request: the website's, which the install refuses", async () => {
    for (const key of ['made-up-1', 'made-up-2']) {
      stack.sandbox.log.reset();
      const answer = await stack.gql(DASHBOARD, {}, key);
      expect(firstError(answer).extensions?.code).toBe('UNAUTHENTICATED');
      expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/1']);
    }
  });

  it("reads a new key's website before its statistics, and both together once the install accepted it", async () => {
    const first = await stack.gql<{ website: { id: string } }>(DASHBOARD, {}, KEY_1);
    expect(dataOf(first).website.id).toBe('1');
    expect(stack.sandbox.log.count).toBe(3);
    // The website's call was over before the statistics' started.
    const [website, ...stats] = stack.sandbox.log.entries;
    expect(website?.path).toBe('/api/v1/websites/1');
    for (const stat of stats) expect(stat.startedAt).toBeGreaterThanOrEqual(website?.endedAt ?? Number.POSITIVE_INFINITY);

    stack.sandbox.log.reset();
    const again = await stack.gql<{ website: { id: string } }>(DASHBOARD, {}, KEY_1);
    expect(dataOf(again).website.id).toBe('1');
    expect(stack.sandbox.log.count).toBe(3);
    expect(stack.sandbox.log.maxInFlight).toBe(3); // looked ahead: all three at once
  });
});
