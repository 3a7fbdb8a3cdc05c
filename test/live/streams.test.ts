// Event streams as HTTP sees them: they hold no request slot but have their own bounds, and they are
// closed, their connection and never with `complete` (which a graphql-sse client takes as the end for
// good), at LIVE_MAX_LIFETIME_S and when the gateway drains, so that their clients subscribe again.
import { Writable } from 'node:stream';
import { createClient } from 'graphql-sse';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_1, KEY_2, dataOf, restCalls, startStack, useStack, type Stack } from '../fixture.js';
import { lifetimeOf } from '../../src/http/streams.js';
import { openSubscription } from './sse.js';

interface LiveWebsite {
  website: { id: string };
}

const LIVE_DASHBOARD = `subscription Live($id: ID!) {
  website(id: $id) { id domain favorite today: stats(name: VISITOR, period: TODAY) { nodes { value count } } }
}`;

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('open streams', () => {
  const stack = useStack({
    env: {
      MAX_ACTIVE_REQUESTS: '1',
      LIVE_INTERVAL_S: '60',
      LIVE_MAX_STREAMS: '3',
      LIVE_MAX_STREAMS_PER_KEY: '2',
      LIVE_MAX_LIFETIME_S: '2',
    },
  });
  const open = (id: string, key: string) =>
    openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id } }, key);

  it("hold no request slot, within their own bounds: LIVE_MAX_STREAMS_PER_KEY, LIVE_MAX_STREAMS, then the lifetime's end", async () => {
    // Taken before the stream opens: its lifetime starts once it is admitted, a little later.
    const openedAt = Date.now();
    const a = await open('1', KEY_1);
    const b = await open('2', KEY_1);
    await a.next();
    await b.next();
    // MAX_ACTIVE_REQUESTS is 1 and two streams are open: a query still gets in.
    expect(dataOf(await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }')).website.id).toBe('1');
    // A third stream of the same key ends at once, with `complete`: its error is final.
    const third = await open('5', KEY_1);
    expect((await third.next())?.errors?.map((error) => error.extensions?.code)).toEqual(['OVERLOADED']);
    expect(await third.next()).toBeNull();
    expect(third.endedBy).toBe('complete');
    // Another key's stream takes the process's third place; a fourth stream is turned away with a 503.
    const other = await open('3', KEY_2);
    expect((await other.next())?.data?.website.id).toBe('3');
    const fourth = await open('3', KEY_2);
    expect(fourth.response.status).toBe(503);
    expect(fourth.response.headers.get('retry-after')).toBe('1');
    // LIVE_MAX_LIFETIME_S: each stream's connection is closed by then, without `complete`, for its
    // client to subscribe again; not before.
    expect(await a.next(5_000)).toBeNull();
    expect(a.endedBy).toBe('closed');
    expect(Date.now() - openedAt).toBeGreaterThanOrEqual(1_750); // 90 % of it at the least
    expect(await other.next(5_000)).toBeNull();
    expect(other.endedBy).toBe('closed');
    expect(await b.next(5_000)).toBeNull();
    expect(b.endedBy).toBe('closed');
    // Their places are free again.
    const again = await open('3', KEY_2);
    expect(again.response.status).toBe(200);
    expect((await again.next())?.data?.website.id).toBe('3');
    again.close();
  });

  it('a graphql-sse client takes the closed connection for a network error and subscribes again, never completing', async () => {
    const client = createClient({
      url: stack.endpoint,
      headers: { authorization: `Bearer ${KEY_1}` },
      // Its default backoff, shortened: 1 s and more would only slow the test.
      retry: () => wait(50),
    });
    const events: { id: string; at: number }[] = [];
    const ends: string[] = [];
    const retried: boolean[] = [];
    const startedAt = Date.now();
    const unsubscribe = client.subscribe<LiveWebsite>(
      { query: LIVE_DASHBOARD, variables: { id: '4' } },
      {
        next: (result) => void events.push({ id: String(result.data?.website.id), at: Date.now() - startedAt }),
        error: (error) => void ends.push(`error: ${String(error)}`),
        complete: () => void ends.push('complete'),
      },
      { connecting: (reconnecting) => void retried.push(reconnecting) },
    );
    try {
      while (events.length < 2 && Date.now() - startedAt < 8_000) await wait(50);
      // The first result of each connection: at once, then again once the lifetime closed the first one.
      expect(events.map((event) => event.id)).toEqual(['4', '4']);
      expect(events[1]?.at).toBeGreaterThanOrEqual(1_750); // 90 % of the lifetime at the least
      expect(retried).toEqual([false, true]);
      expect(ends).toEqual([]);
    } finally {
      unsubscribe();
      client.dispose();
    }
  });
});

describe("a stream's end", () => {
  let running: Stack | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
    vi.restoreAllMocks();
  });

  it('lets go of everything: the poll stops, the place frees up, nothing is logged but the requests, drain finds nothing in flight', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    const consoleError = vi.spyOn(console, 'error');
    const consoleWarn = vi.spyOn(console, 'warn');
    running = await startStack({
      env: {
        LIVE_INTERVAL_S: '1',
        LIVE_CALLS_PER_MIN: '600',
        LIVE_MAX_LIFETIME_S: '1',
        LIVE_MAX_STREAMS: '1',
        DRAIN_DELAY_MS: '0',
        DRAIN_TIMEOUT_MS: '600000',
      },
      gateway: { logger: pino({ level: 'debug', base: null }, sink) },
    });
    const stack = running;
    const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
    expect((await stream.next())?.data?.website.id).toBe('1');
    expect(await stream.next(3_000)).toBeNull();
    expect(stream.endedBy).toBe('closed');
    // The poller stopped with its only stream (LIVE_INTERVAL_S is 1: it would have polled again).
    await wait(300);
    const polls = restCalls(stack.sandbox).length;
    expect(polls).toBeGreaterThanOrEqual(1);
    await wait(1_500);
    expect(restCalls(stack.sandbox)).toHaveLength(polls);
    // LIVE_MAX_STREAMS is 1: its place is free again.
    const next = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '2' } }, KEY_1);
    expect(next.response.status).toBe(200);
    expect((await next.next())?.data?.website.id).toBe('2');
    next.close();
    await wait(100);
    // Nothing is left in flight: drain (DRAIN_DELAY_MS 0) ends. Its timeout is ten minutes, so a drain that
    // found something in flight could only end at the test's own timeout, failing it.
    await stack.gateway.drain();
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    expect(new Set(lines.map((line) => line.msg))).toEqual(new Set(['graphql request']));
    expect(consoleError).not.toHaveBeenCalled();
    expect(consoleWarn).not.toHaveBeenCalled();
  });
});

describe('drain', () => {
  let running: Stack | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('closes open streams at once, without `complete`, and answers a new one 503 while queries are still served', async () => {
    running = await startStack({ env: { LIVE_INTERVAL_S: '60', DRAIN_DELAY_MS: '4000' } });
    const stack = running;
    const a = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
    const b = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '2' } }, KEY_1);
    expect((await a.next())?.data?.website.id).toBe('1');
    expect((await b.next())?.data?.website.id).toBe('2');
    const drained = stack.gateway.drain();
    // At once: well within DRAIN_DELAY_MS, when the listener closes.
    expect(await a.next(2_500)).toBeNull();
    expect(await b.next(2_500)).toBeNull();
    expect([a.endedBy, b.endedBy]).toEqual(['closed', 'closed']);
    // A client subscribing again is sent elsewhere; a query is still served until the listener closes.
    const refused = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
    expect(refused.response.status).toBe(503);
    expect(refused.response.headers.get('retry-after')).toBe('1');
    expect(await refused.response.json()).toMatchObject({ errors: [{ extensions: { code: 'OVERLOADED' } }] });
    expect(stack.gateway.server.listening).toBe(true);
    expect(dataOf(await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }')).website.id).toBe('1');
    await drained;
  });
});

describe("a stream's lifetime", () => {
  it('is spread between 90 % and all of LIVE_MAX_LIFETIME_S, in whole seconds, so that streams opened together do not all reconnect at once', () => {
    expect(lifetimeOf(3_600_000, () => 0)).toBe(3_240_000);
    expect(lifetimeOf(3_600_000, () => 0.9999)).toBe(3_599_000);
    const spread = new Set(Array.from({ length: 200 }, () => lifetimeOf(3_600_000)));
    expect(spread.size).toBeGreaterThan(50);
    for (const ms of spread) {
      expect(ms % 1_000).toBe(0);
      expect(ms).toBeGreaterThanOrEqual(3_240_000);
      expect(ms).toBeLessThanOrEqual(3_600_000);
    }
    // A lifetime of a few seconds (tests) keeps its fractions.
    expect(lifetimeOf(2_000, () => 0.5)).toBeCloseTo(1_900);
  });
});
