// An install is trusted no further than the request: over real HTTP against the sandbox, scripted to
// misreport. A page count past what a range (or the field's declared bound) can hold is refused after
// the pages already read, so no operation calls the install more often than its declared cost; a
// website answered for another id is refused, and not cached; a page without paging numbers is walked
// on while it is full, within the same bound. The sandbox's request log is the truth for the calls.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ScriptedFault } from '../../src/sandbox/index.js';
import {
  CREATE_WEBSITE,
  DELETE_WEBSITE,
  TODAY,
  UPDATE_WEBSITE,
  dataOf,
  firstError,
  present,
  restCalls,
  useStack,
  type GraphQLResponse,
  type Stack,
  type WebsitePayloadData,
} from '../fixture.js';

type Dialect = 'contract' | 'legacy';

const DAY_MS = 86_400_000;
const plusDays = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

interface Extensions {
  cost?: { requested: number; limit: number };
  upstreamCalls?: number;
  cache?: { hits: number; misses: number; stale: number };
}
const extensionsOf = (response: GraphQLResponse<unknown>): Extensions => (response.extensions ?? {}) as Extensions;

/** The next `count` answers of the sandbox, each with the fault (used up by whichever request comes). */
const times = (count: number, fault: ScriptedFault): ScriptedFault[] => Array.from({ length: count }, () => fault);
const CLAIMING_20000_PAGES: ScriptedFault = { kind: 'pageCount', lastPage: 20_000 };

/**
 * Runs `query` and checks the calls it made: the sandbox saw exactly the faults scripted (none is
 * left over for the next test), the answer counts them all, and they are within the declared cost.
 */
async function runCounted(stack: Stack, query: string, calls: number): Promise<GraphQLResponse<unknown>> {
  const response = await stack.gql<unknown>(query);
  const { upstreamCalls, cost } = extensionsOf(response);
  // Calls of the request still in flight when its answer leaves would show up here only later.
  await vi.waitFor(() => expect(stack.sandbox.log.inFlight).toBe(0));
  expect(stack.sandbox.log.count).toBe(calls);
  expect(upstreamCalls).toBe(calls);
  expect(calls).toBeLessThanOrEqual(present(cost, 'extensions.cost').requested);
  return response;
}

describe.each<Dialect>(['contract', 'legacy'])('an install claiming 20,000 pages (%s dialect)', (dialect) => {
  const stack = useStack({ sandbox: { dialect } });
  const LAST_30_DAYS = `from: "${plusDays(TODAY, -29)}", to: "${TODAY}"`;

  beforeAll(async () => {
    // The gateway learns this install's names of the daily statistics once (the older one refuses
    // `visitor` and `pageview`): done here, so that the tests count only the calls they cause.
    dataOf(await stack.gql('{ website(id: "1") { summary(period: TODAY) { current { visitors } } } }'));
  });

  it('a series of 30 days (cost 2): UPSTREAM_BAD_RESPONSE after the website and the first page', async () => {
    // Two faults: the website's answer is no page, and takes one whichever comes first.
    stack.sandbox.scriptFaults(times(2, CLAIMING_20000_PAGES));
    const response = await runCounted(stack, '{ website(id: "1") { id series(metric: VISITORS, period: LAST_30_DAYS) { total } } }', 2);
    const error = firstError(response);
    expect(error.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(error.path).toEqual(['website', 'series']);
    expect(error.message).toBe(
      `The analytics service claimed 20000 pages of 100 VISITOR rows from ${plusDays(TODAY, -29)} to ${TODAY}, where at most 30 rows can be.`,
    );
    expect(extensionsOf(response).cost?.requested).toBe(2);
  });

  it('a series of 365 days (cost 5): refused at the first page, the others never asked for', async () => {
    stack.sandbox.scriptFaults(times(2, CLAIMING_20000_PAGES));
    const response = await runCounted(
      stack,
      '{ website(id: "1") { series(metric: PAGEVIEWS, period: LAST_365_DAYS, interval: MONTH) { total } } }',
      2,
    );
    expect(firstError(response).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(extensionsOf(response).cost?.requested).toBe(1 + 4);
  });

  it('a summary compared with the previous period (cost 5): the four first pages, then UPSTREAM_BAD_RESPONSE', async () => {
    stack.sandbox.scriptFaults(times(5, CLAIMING_20000_PAGES));
    const response = await runCounted(
      stack,
      '{ website(id: "1") { summary(period: LAST_30_DAYS, compare: PREVIOUS_PERIOD) { current { visitors } previous { pageviews } } } }',
      5,
    );
    const error = firstError(response);
    expect(error.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(error.path).toEqual(['website', 'summary']);
    expect(extensionsOf(response).cost?.requested).toBe(5);
  });

  it('a page past the first claiming more than the range holds: refused before any other page', async () => {
    // 150 days: two pages; the second (read after the first) claims 20,000.
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 0 }, { kind: 'delay', ms: 0 }, CLAIMING_20000_PAGES]);
    const from = plusDays(TODAY, -149);
    const response = await runCounted(
      stack,
      `{ website(id: "1") { series(metric: VISITORS, from: "${from}", to: "${TODAY}") { total } } }`,
      3,
    );
    expect(firstError(response).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(firstError(response).message).toContain('where at most 150 rows can be');
  });

  it('StatList.sum of VISITOR (cost 22): a list claiming 200,000 rows over 30 days is refused, no page read past the first', async () => {
    // The first page of 100 rows the sum reads starts with the website and the list (the look-ahead).
    stack.sandbox.scriptFaults(times(3, CLAIMING_20000_PAGES));
    const response = await runCounted(stack, `{ website(id: "1") { stats(name: VISITOR, ${LAST_30_DAYS}) { totalCount sum } } }`, 3);
    const error = firstError(response);
    expect(error.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(error.path).toEqual(['website', 'stats', 'sum']);
    expect(extensionsOf(response).cost?.requested).toBe(1 + 1 + 20);
  });

  it('Stat.share of VISITOR: an honest list, then a page of 100 rows claiming 20,000 pages', async () => {
    // The website, the list and the page the sum reads, started together in that order.
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 0 }, { kind: 'delay', ms: 0 }, CLAIMING_20000_PAGES]);
    const response = await runCounted(stack, `{ website(id: "1") { stats(name: VISITOR, ${LAST_30_DAYS}) { nodes { share } } } }`, 3);
    expect(firstError(response).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    const sums = restCalls(stack.sandbox).filter((call) => call.includes('per_page=100'));
    expect(sums).toHaveLength(1);
  });

  it('StatList.sum of PAGE, which has no most rows: BAD_USER_INPUT (narrow it), no page read past the first', async () => {
    stack.sandbox.scriptFaults(times(3, CLAIMING_20000_PAGES));
    const response = await runCounted(stack, `{ website(id: "1") { stats(name: PAGE, ${LAST_30_DAYS}) { sum } } }`, 3);
    const error = firstError(response);
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error.message).toBe('This statistic has more than 2000 rows to read; narrow it with search or a shorter range.');
  });
});

describe.each<Dialect>(['contract', 'legacy'])(
  'an install without paging numbers (%s dialect): full pages are walked on, within the bound',
  (dialect) => {
    const stack = useStack({ sandbox: { dialect } });
    const NO_PAGING: ScriptedFault = { kind: 'noPaging' };
    interface SeriesData {
      website: { series: { total: number; points: { date: string; count: number }[] } } | null;
    }
    const seriesOf = (from: string): string =>
      `{ website(id: "1") { series(metric: VISITORS, from: "${from}", to: "${TODAY}") { total points { date count } } } }`;
    const honest = async (query: string): Promise<SeriesData> => dataOf(await stack.gql<SeriesData>(query));

    beforeAll(async () => {
      await honest(seriesOf(TODAY)); // the install's name of VISITOR, learned
    });

    it('250 days: three pages read in turn (100, 100, 50 rows), every day there (cost 4)', async () => {
      const query = seriesOf(plusDays(TODAY, -249));
      const expected = await honest(query);
      expect(expected.website?.series.points.every((point) => point.count > 0)).toBe(true);
      stack.sandbox.log.reset();
      stack.sandbox.scriptFaults(times(4, NO_PAGING));
      const response = await runCounted(stack, query, 4);
      expect(dataOf(response)).toEqual(expected);
      expect(extensionsOf(response).cost?.requested).toBe(4);
    });

    it('200 days: the second page is full, but the range holds no more: no third page, no error (cost 3)', async () => {
      const query = seriesOf(plusDays(TODAY, -199));
      const expected = await honest(query);
      stack.sandbox.log.reset();
      stack.sandbox.scriptFaults(times(3, NO_PAGING));
      const response = await runCounted(stack, query, 3);
      expect(dataOf(response)).toEqual(expected);
    });

    it('StatList.sum from a list of 10 without paging numbers: every page of 100 read, the sum whole', async () => {
      const from = plusDays(TODAY, -249);
      type SumData = { website: { stats: { sum: number } } | null };
      const query = `{ website(id: "1") { stats(name: VISITOR, from: "${from}", to: "${TODAY}") { sum } } }`;
      const expected = present(dataOf(await stack.gql<SumData>(query)).website, 'website').stats.sum;
      expect(expected).toBe(present((await honest(seriesOf(from))).website, 'website').series.total);
      stack.sandbox.log.reset();
      // The website, the list, then pages 1 to 3 of 100.
      stack.sandbox.scriptFaults(times(5, NO_PAGING));
      const response = await runCounted(stack, query, 5);
      expect(present((dataOf(response) as SumData).website, 'website').stats.sum).toBe(expected);
    });
  },
);

describe.each<Dialect>(['contract', 'legacy'])('a website answered with another id (%s dialect)', (dialect) => {
  const stack = useStack({ sandbox: { dialect } });
  const ANSWERING_2: ScriptedFault = { kind: 'websiteId', id: 2 };

  it('website(id: 1) answered as website 2: UPSTREAM_BAD_RESPONSE naming both ids, nothing of the body', async () => {
    stack.sandbox.scriptFaults([ANSWERING_2]);
    const response = await stack.gql<{ website: { id: string; domain: string } | null }>('{ website(id: "1") { id domain } }');
    expect(response.data).toEqual({ website: null });
    const error = firstError(response);
    expect(error.extensions).toEqual({ code: 'UPSTREAM_BAD_RESPONSE' });
    expect(error.message).toBe('The analytics service answered website 1 with website 2.');
    expect(JSON.stringify(response)).not.toContain('acme-analytics.com');
  });

  it('Query.stats: the website read beside it answers another id: UPSTREAM_BAD_RESPONSE, and no rows', async () => {
    // The statistic's answer names no website, and takes the other fault unchanged.
    stack.sandbox.scriptFaults([ANSWERING_2, ANSWERING_2]);
    const response = await stack.gql<unknown>(`{ stats(websiteId: "1", name: COUNTRY, period: LAST_30_DAYS) { nodes { value count } } }`);
    expect(response.data).toBeNull();
    expect(firstError(response).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(JSON.stringify(response)).not.toMatch(/"count"|"value"/);
  });

  it('an update answered for another website: UPSTREAM_BAD_RESPONSE with outcome UNKNOWN, sent once, not read back', async () => {
    const created = present(
      dataOf(
        await stack.gql<{ createWebsite: WebsitePayloadData }>(CREATE_WEBSITE, { input: { domain: `mixed-up-${dialect}.example.com` } }),
      ).createWebsite.website,
      'the created website',
    );
    stack.sandbox.log.reset();
    stack.sandbox.scriptFaults([ANSWERING_2]);
    const response = await stack.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, {
      id: created.id,
      input: { privacy: 'PRIVATE' },
    });
    expect(response.data).toBeNull();
    const error = firstError(response);
    expect(error.extensions).toEqual({ code: 'UPSTREAM_BAD_RESPONSE', outcome: 'UNKNOWN' });
    expect(error.message).toBe(
      `The analytics service answered the update of website ${created.id} with website 2: whether website ${created.id} was changed is unknown; read it again before going on.`,
    );
    expect(restCalls(stack.sandbox)).toEqual([`PATCH /api/v1/websites/${created.id}`]);

    stack.sandbox.log.reset();
    stack.sandbox.scriptFaults([ANSWERING_2]);
    const deletion = await stack.gql<unknown>(DELETE_WEBSITE, { id: created.id });
    expect(deletion.data).toBeNull();
    expect(firstError(deletion).extensions).toEqual({ code: 'UPSTREAM_BAD_RESPONSE', outcome: 'UNKNOWN' });
    expect(firstError(deletion).message).toContain(
      `the deletion of website ${created.id} with website 2: whether website ${created.id} was deleted is unknown`,
    );
    expect(restCalls(stack.sandbox)).toEqual([`DELETE /api/v1/websites/${created.id}`]);
  });

  describe('with the read cache on', () => {
    const cached = useStack({ sandbox: { dialect }, env: { CACHE: 'on' } });

    it('the wrong answer is not cached: asked again, the website is read from the install, and only then cached', async () => {
      type Data = { website: { id: string; domain: string } | null };
      const query = '{ website(id: "1") { id domain } }';
      cached.sandbox.scriptFaults([ANSWERING_2]);
      const wrong = await cached.gql<Data>(query);
      expect(firstError(wrong).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
      expect(restCalls(cached.sandbox)).toEqual(['GET /api/v1/websites/1']);

      cached.sandbox.log.reset();
      const again = await cached.gql<Data>(query);
      expect(dataOf(again)).toEqual({ website: { id: '1', domain: 'acme-analytics.com' } });
      expect(restCalls(cached.sandbox)).toEqual(['GET /api/v1/websites/1']);
      expect(extensionsOf(again).cache).toEqual({ hits: 0, misses: 1, stale: 0 });

      // The right answer is cached: the third time, no read of the website.
      cached.sandbox.log.reset();
      const third = await cached.gql<Data>(query);
      expect(dataOf(third)).toEqual(dataOf(again));
      expect(extensionsOf(third).cache).toEqual({ hits: 1, misses: 0, stale: 0 });
      expect(restCalls(cached.sandbox)).not.toContain('GET /api/v1/websites/1');
    });
  });
});
