// One wave: a dashboard's reads start together, over real HTTP against a sandbox with latency, waves
// counted from the sandbox's log (bench/waves.ts: a call starting after another ended is a wave more).
// From a key the gateway knows, a rich dashboard (a summary against the previous period, two series, top
// pages with their share, countries) is one wave; from a key it has not seen, the website's call is one
// and everything else the next; a made-up key's request makes the one call that refuses it.
import { describe, expect, it } from 'vitest';
import { countWaves } from '../../bench/waves.js';
import { tenantKey } from '../../src/sandbox/demo-data.js';
import { KEY_1, KEY_2, dataOf, firstError, restCalls, useStack } from '../fixture.js';

const stack = useStack({ sandbox: { latencyMs: 60, tenantKeys: 2 } });

const RANGE = 'from: "2026-02-14", to: "2026-03-14"';
const RICH = `{ website(id: "1") { id domain
  summary(${RANGE}, compare: PREVIOUS_PERIOD) { current { visitors pageviews } previous { visitors pageviews } visitorsChange }
  visitors: series(metric: VISITORS, ${RANGE}) { total points { date count } }
  pageviews: series(metric: PAGEVIEWS, ${RANGE}, interval: WEEK) { total }
  pages: stats(name: PAGE, ${RANGE}) { totalCount nodes { value count share } }
  countries: stats(name: COUNTRY, ${RANGE}) { nodes { value count } } } }`;

interface Rich {
  website: {
    summary: { current: { visitors: number }; previous: { visitors: number } };
    visitors: { total: number };
    pages: { totalCount: number; nodes: { share: number | null }[] };
  };
}

const waves = (): number => countWaves(stack.sandbox.log.entries);

describe('the look-ahead: one wave of upstream calls', () => {
  it('reads a rich dashboard in one wave for a key the gateway knows, in two for a key it has not seen', async () => {
    // The sandbox makes its statistics at their first read, in this process: that first read is not timed.
    const warm = await stack.gql<Rich>(RICH, {}, tenantKey(1));
    expect(warm.errors).toBeUndefined();

    // A new key's first request: its website's call, then the rest together.
    stack.sandbox.log.reset();
    const first = await stack.gql<Rich>(RICH, {}, tenantKey(2));
    expect(dataOf(first)).toEqual(dataOf(warm));
    const firstCalls = restCalls(stack.sandbox).sort();
    expect(restCalls(stack.sandbox)[0]).toBe('GET /api/v1/websites/1');
    expect(waves()).toBe(2);

    // Known now: every read at once.
    stack.sandbox.log.reset();
    const again = await stack.gql<Rich>(RICH, {}, tenantKey(2));
    expect(dataOf(again)).toEqual(dataOf(first));
    // The same eight reads, each once (the pages' share reads a page of 100 rows beside the page of 10),
    // no more than a request has in flight at once (MAX_CONCURRENCY's default).
    expect(restCalls(stack.sandbox).sort()).toEqual(firstCalls);
    expect(new Set(firstCalls)).toHaveProperty('size', 8);
    expect(firstCalls).toContainEqual(expect.stringMatching(/name=page&page=1&per_page=100/));
    expect(waves()).toBe(1);
    const { website } = dataOf(again);
    expect(website.pages.nodes.some((row) => row.share !== null)).toBe(true);
    expect(website.summary.previous.visitors).toBeGreaterThan(0);
  });

  it("starts a statistic's sum with its page", async () => {
    await stack.gql(RICH, {}, KEY_1); // known from now on
    stack.sandbox.log.reset();
    const answer = await stack.gql<{ website: { countries: { sum: number } } }>(
      `{ website(id: "1") { countries: stats(name: COUNTRY, ${RANGE}) { sum } } }`,
      {},
      KEY_1,
    );
    expect(dataOf(answer).website.countries.sum).toBeGreaterThan(0);
    expect(restCalls(stack.sandbox)).toHaveLength(3);
    expect(waves()).toBe(1);
  });

  it("reads the root stats' page and the rows its share reads in one wave, for a key the gateway knows", async () => {
    const ROOT_STATS = `{ stats(websiteId: "1", name: PAGE, ${RANGE}) { sum nodes { value share } } }`;
    const read = () => stack.gql<{ stats: { sum: number; nodes: { share: number | null }[] } }>(ROOT_STATS, {}, KEY_1);
    dataOf(await read()); // known from now on
    stack.sandbox.log.reset();
    const answer = await read();
    expect(dataOf(answer).stats.sum).toBeGreaterThan(0);
    expect(dataOf(answer).stats.nodes.some((row) => row.share !== null)).toBe(true);
    // The website (the key's proof of ownership), the page of 10 and the first page of 100 rows, together.
    expect(restCalls(stack.sandbox)).toHaveLength(3);
    expect(restCalls(stack.sandbox)).toContainEqual(expect.stringMatching(/name=page&page=1&per_page=100/));
    expect(waves()).toBe(1);
    expect(answer.extensions?.upstreamCalls).toBe(3);

    // A made-up key: the website's and the page's calls (as before the look-ahead), not the rows'.
    stack.sandbox.log.reset();
    const refused = await stack.gql(ROOT_STATS, {}, 'made-up-key');
    expect(firstError(refused).extensions?.code).toBe('UNAUTHENTICATED');
    expect(restCalls(stack.sandbox)).not.toContainEqual(expect.stringMatching(/per_page=100/));
  });

  it("starts the rows a listed website's sum reads with its page: the list, then one wave", async () => {
    const LISTED = `{ websitesConnection(first: 3) { edges { node { id stats(name: COUNTRY, ${RANGE}) { sum } } } } }`;
    type Listed = { websitesConnection: { edges: { node: { stats: { sum: number } } }[] } };
    const read = () => stack.gql<Listed>(LISTED, {}, KEY_1);
    dataOf(await read());
    stack.sandbox.log.reset();
    const answer = await read();
    const listed = dataOf(answer).websitesConnection.edges.map((edge) => edge.node);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((website) => website.stats.sum >= 0)).toBe(true);
    // The list, then each website's page of 10 and its first page of 100 rows together.
    expect(restCalls(stack.sandbox)).toHaveLength(1 + 2 * listed.length);
    expect(waves()).toBe(2);
  });

  it("spends nothing more than the refusing call on a made-up key's rich dashboard", async () => {
    const answer = await stack.gql(RICH, {}, 'made-up-key');
    expect(firstError(answer).extensions?.code).toBe('UNAUTHENTICATED');
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites/1']);
  });

  it("answers another user's website's dashboard in one wave, once every read started with it has ended", async () => {
    // Known from its own website (3); website 1 is another user's: NOT_FOUND, its statistics read all the same.
    dataOf(await stack.gql(`{ website(id: "3") { id } }`, {}, KEY_2));
    stack.sandbox.log.reset();
    // The website's NOT_FOUND comes first, the statistics well after it.
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 0 }, ...Array.from({ length: 7 }, () => ({ kind: 'delay' as const, ms: 400 }))]);
    const answer = await stack.gql(RICH, {}, KEY_2);
    expect(firstError(answer).extensions?.code).toBe('NOT_FOUND');
    expect(waves()).toBe(1);
    // The answer left once the reads started with the website had ended: it counts them all.
    expect(stack.sandbox.log.count).toBe(8);
    expect(answer.extensions?.upstreamCalls).toBe(8);
    expect(stack.sandbox.log.inFlight).toBe(0);
  });
});
