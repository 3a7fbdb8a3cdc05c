// Subscription.website over GraphQL over SSE, against the sandbox over real HTTP: the first result at
// once, one poll for every stream of a key and document, a push only when the data changed, the end of
// polling when the last stream leaves, and the same refusals as the query (ownership, cost limit).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KEY_1, KEY_2, UPDATE_WEBSITE, dataOf, metricOf, restCalls, startStack, until, useStack } from '../fixture.js';
import { openSubscription } from './sse.js';

interface LiveWebsite {
  website: { id: string; domain: string; favorite: boolean | null; today?: { nodes: { value: string; count: number }[] } };
}

const LIVE_DASHBOARD = `subscription Live($id: ID!) {
  website(id: $id) { id domain favorite today: stats(name: VISITOR, period: TODAY) { nodes { value count } } }
}`;

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('subscription { website }', () => {
  const stack = useStack({ env: { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600', MAX_COST: '3', METRICS_PORT: '0' } });

  it('answers an event stream that proxies pass through, with the first result at once', async () => {
    const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
    // Asked for gzip and br: an event stream is never compressed, or proxies and browsers would hold events back.
    expect(['none', null]).toContain(stream.response.headers.get('content-encoding'));
    const first = await stream.next();
    expect(first?.errors).toBeUndefined();
    expect(first?.data?.website).toMatchObject({ id: '1', domain: 'acme-analytics.com' });
    expect(first?.data?.website.today?.nodes).toHaveLength(1);
    stream.close();
  });

  it('polls once for every stream of one key, document and variables', async () => {
    // Polls a minute apart: whatever time the second stream takes to open, no second poll comes before it.
    const slow = await startStack({ env: { LIVE_INTERVAL_S: '60', MAX_COST: '3' } });
    try {
      const body = { query: LIVE_DASHBOARD, variables: { id: '2' } };
      const a = await openSubscription<LiveWebsite>(slow.endpoint, body, KEY_1);
      const firstOfA = await a.next();
      const b = await openSubscription<LiveWebsite>(slow.endpoint, body, KEY_1);
      const firstOfB = await b.next();
      expect(firstOfB).toEqual(firstOfA);
      // One execution of the selection: the website and its statistic, once each.
      expect(restCalls(slow.sandbox).filter((call) => call.startsWith('GET /api/v1/websites/2'))).toHaveLength(1);
      a.close();
      b.close();
    } finally {
      await slow.close();
    }
  });

  it('pushes again only when the data changed, and stops polling when the last stream leaves', async () => {
    const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '4' } }, KEY_1);
    const first = await stream.next();
    const before = first?.data?.website.favorite;
    // Polled about twice meanwhile, with the same data: nothing pushed.
    await expect(stream.next(2_500)).rejects.toThrow(/no event/);
    expect(restCalls(stack.sandbox).filter((call) => call === 'GET /api/v1/websites/4').length).toBeGreaterThanOrEqual(2);
    dataOf(await stack.gql(UPDATE_WEBSITE, { id: '4', input: { favorite: !before } }));
    const changed = await stream.next(5_000);
    expect(changed?.data?.website.favorite).toBe(!before);
    stream.close();
    // Once the gateway has seen the stream go and the last poll's calls are answered, nothing more comes.
    await until('the topic to stop', async () => (await metricOf(stack.gateway, 'gateway_live_topics')) === 0);
    await until('the last poll to end', () => stack.sandbox.log.inFlight === 0);
    const polls = restCalls(stack.sandbox).length;
    await wait(2_500);
    expect(restCalls(stack.sandbox).length).toBe(polls);
  });

  it("pushes today's figures as they grow (the sandbox's traffic control path)", async () => {
    const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
    const before = (await stream.next())?.data?.website.today?.nodes[0]?.count ?? 0;
    const added = await fetch(`${stack.sandbox.url}/__sandbox/traffic`, {
      method: 'POST',
      body: JSON.stringify({ websiteId: 1, visitors: 7 }),
    });
    expect(added.status).toBe(204);
    const after = await stream.next(5_000);
    expect(after?.data?.website.today?.nodes[0]?.count).toBe(before + 7);
    stream.close();
    const refused = await fetch(`${stack.sandbox.url}/__sandbox/traffic`, {
      method: 'POST',
      body: JSON.stringify({ websiteId: 1, visitors: -1 }),
    });
    expect(refused.status).toBe(400);
  });

  it("ends with NOT_FOUND and no data for another user's website or an unknown id (BAD_USER_INPUT for an id that is none)", async () => {
    for (const [id, key, code] of [
      ['1', KEY_2, 'NOT_FOUND'],
      ['999', KEY_1, 'NOT_FOUND'],
      ['one', KEY_1, 'BAD_USER_INPUT'],
    ] as const) {
      const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id } }, key);
      const event = await stream.next();
      expect(event?.data).toBeUndefined();
      expect(event?.errors?.map((error) => error.extensions?.code)).toEqual([code]);
      expect(await stream.next()).toBeNull();
    }
  });

  it('ends with UNAUTHENTICATED without a key, and with the cost limit as the query has it', async () => {
    const anonymous = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, null);
    expect((await anonymous.next())?.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(await anonymous.next()).toBeNull();
    // 1 + 3 statistics: 4 upstream calls, over MAX_COST 3.
    const costly = `subscription { website(id: "1") { id
      a: stats(name: PAGE, period: TODAY) { totalCount } b: stats(name: COUNTRY, period: TODAY) { totalCount }
      c: stats(name: BROWSER, period: TODAY) { totalCount } } }`;
    const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: costly }, KEY_1);
    const event = await stream.next();
    expect(event?.data).toBeUndefined();
    expect(event?.errors?.map((error) => error.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(await stream.next()).toBeNull();
  });
});

describe('a revoked key', () => {
  it("ends every stream of the key with UNAUTHENTICATED at its next poll, with the read cache on, and no other key's", async () => {
    const stack = await startStack({ env: { CACHE: 'on', KEY_RECHECK_S: '2', LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' } });
    try {
      // Days that are over come from the cache; the website itself (its ownership) is read from the
      // install at every poll, as everything that can change is: the next poll finds the key refused.
      const cached = await openSubscription<LiveWebsite>(
        stack.endpoint,
        {
          query:
            'subscription { website(id: "1") { id before: stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-14") { totalCount } } }',
        },
        KEY_1,
      );
      const fresh = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '2' } }, KEY_1);
      const other = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '3' } }, KEY_2);
      for (const stream of [cached, fresh, other]) expect((await stream.next())?.errors).toBeUndefined();
      stack.sandbox.revokeKey(KEY_1);
      const revokedAt = Date.now();
      for (const stream of [cached, fresh]) {
        const last = await stream.next(6_000);
        expect(last?.data).toBeUndefined();
        expect(last?.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
        expect(await stream.next()).toBeNull();
      }
      // The next poll (1 s), well within KEY_RECHECK_S (2 s) and the interval: with some slack for a loaded machine.
      expect(Date.now() - revokedAt).toBeLessThan(5_000);
      await expect(other.next(1_500)).rejects.toThrow(/no event/);
      other.close();
    } finally {
      await stack.close();
    }
  });
});

describe('the request log', () => {
  it('has a line for the stream when it opens and one for each poll, named after the subscription', async () => {
    const lines: { msg?: string; operation?: string | null; upstreamCalls?: number }[] = [];
    const logger = pino({ level: 'info', base: null }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const stack = await startStack({ env: { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' }, gateway: { logger } });
    try {
      const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
      await stream.next();
      const requestLines = () => lines.filter((line) => line.msg === 'graphql request');
      const withCalls = () => requestLines().filter((line) => (line.upstreamCalls ?? 0) > 0);
      // The stream, its first poll, and at least one more.
      await until('a line for the stream and for two polls', () => requestLines().length >= 3 && withCalls().length >= 2);
      stream.close();
      const requests = requestLines();
      expect(requests.length).toBeGreaterThanOrEqual(3);
      expect(requests.every((line) => line.operation === 'Live')).toBe(true);
      expect(withCalls().length).toBeGreaterThanOrEqual(2);
    } finally {
      await stack.close();
    }
  });
});

describe('with the read cache (CACHE=on)', () => {
  const stack = useStack({ env: { CACHE: 'on', LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' } });
  const todayCalls = (id: string) =>
    restCalls(stack.sandbox).filter((call) => call.startsWith(`GET /api/v1/stats/${id}?`) && call.includes('name=visitor')).length;

  it('polls read today from the install each time (not a cache entry of up to CACHE_TTL_RECENT_S), settled days from the cache', async () => {
    const document = `subscription { website(id: "5") { id
      today: stats(name: VISITOR, period: TODAY) { nodes { count } }
      before: stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-14") { totalCount } } }`;
    const stream = await openSubscription<{ website: { today: { nodes: { count: number }[] } } }>(
      stack.endpoint,
      { query: document },
      KEY_1,
    );
    const before = (await stream.next())?.data?.website.today.nodes[0]?.count ?? 0;
    // Three polls: today read each time, the settled range once.
    await until('three polls of today', () => todayCalls('5') >= 3);
    expect(todayCalls('5')).toBeGreaterThanOrEqual(3);
    expect(restCalls(stack.sandbox).filter((call) => call.includes('name=country')).length).toBe(1);
    const added = await fetch(`${stack.sandbox.url}/__sandbox/traffic`, {
      method: 'POST',
      body: JSON.stringify({ websiteId: 5, visitors: 6 }),
    });
    expect(added.status).toBe(204);
    expect((await stream.next(3_000))?.data?.website.today.nodes[0]?.count).toBe(before + 6);
    stream.close();
  });

  it("shares a read made at the same moment between the key's documents (the cache's coalescing)", async () => {
    const open = (alias: string) =>
      openSubscription(
        stack.endpoint,
        { query: `subscription { website(id: "7") { ${alias}: stats(name: VISITOR, period: TODAY) { totalCount } } }` },
        KEY_1,
      );
    const a = await open('a');
    await a.next();
    const b = await open('b');
    await b.next();
    // b's first poll came within a second of a's: it took a's read of today.
    expect(todayCalls('7')).toBe(1);
    a.close();
    b.close();
  });
});
