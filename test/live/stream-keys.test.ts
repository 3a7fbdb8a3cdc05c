// A stream proves its key as a request does. A new topic past the key's budget waits for its first poll
// with no upstream call, and a subscription whose one field is skipped polled `{}` with none: neither
// ever learnt that its key was made up, and 20 such streams on each of 50 made-up keys took every one of
// LIVE_MAX_STREAMS' places, so that a real key's subscription got 503 for up to LIVE_MAX_LIFETIME_S. Now
// a key the install has not accepted lately is checked before its stream takes a place (its subscription
// waits in the strangers' line as a request does meanwhile), and made-up keys hold no stream's place.
// The skipped field itself is refused by validation (test/graphql/plugins/use-subscription-root.test.ts).
import { describe, expect, it } from 'vitest';
import { KEY_1, KEY_2, restCalls, useStack } from '../fixture.js';
import { openSubscription, type SseStream } from './sse.js';

interface LiveWebsite {
  website: { id: string } | null;
}

const SKIPPED = 'subscription { website(id: "1") @skip(if: true) { id } }';
const live = (id: string) => `subscription { website(id: "${id}") { id } }`;

/** The codes of a stream's first event, or of the JSON answer that refused it. */
async function firstCodes(stream: SseStream<LiveWebsite>): Promise<unknown[]> {
  if (!stream.response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = (await stream.response.json()) as { errors?: { extensions?: { code?: string } }[] };
    return (body.errors ?? []).map((error) => error.extensions?.code);
  }
  return ((await stream.next())?.errors ?? []).map((error) => error.extensions?.code);
}

// With the read cache off (the suites' default) and on: with it, the check reads the key's `seen` mark first.
describe.each(['off', 'on'])("made-up keys' streams, CACHE=%s", (cache) => {
  // Four places, two a key; a key's budget of one call a minute, so that a key's second topic waits
  // for its first poll (no upstream call) instead of polling.
  const stack = useStack({
    env: {
      CACHE: cache,
      LIVE_MAX_STREAMS: '4',
      LIVE_MAX_STREAMS_PER_KEY: '2',
      LIVE_CALLS_PER_MIN: '1',
      LIVE_INTERVAL_S: '60',
      LIVE_MAX_LIFETIME_S: '600',
    },
  });
  const open = (query: string, key: string) => openSubscription<LiveWebsite>(stack.endpoint, { query }, key);
  const KEY_CHECK = 'GET /api/v1/websites?page=1&per_page=10&sort=desc&sort_by=id';

  it('have their key checked even when their polls would make no upstream call: they end with UNAUTHENTICATED', async () => {
    const first = await open(live('1'), 'made-up-c');
    expect(await firstCodes(first)).toEqual(['UNAUTHENTICATED']);
    expect(await first.next()).toBeNull();
    // The key's one call of the minute is spent: a poll of a second document would wait for the next
    // minute, making no call meanwhile. The stream is refused before, by the check of its key.
    stack.sandbox.log.reset();
    const second = await open(live('2'), 'made-up-c');
    expect(await firstCodes(second)).toEqual(['UNAUTHENTICATED']);
    expect(await second.next()).toBeNull();
    expect(second.endedBy).toBe('complete');
    expect(restCalls(stack.sandbox)).toEqual([KEY_CHECK]);
  });

  it('a real key, not known yet, is checked once, then counts as known: its next stream asks nothing more', async () => {
    const first = await open(live('3'), KEY_2);
    expect((await first.next())?.data?.website?.id).toBe('3');
    expect(restCalls(stack.sandbox)).toEqual([KEY_CHECK, 'GET /api/v1/websites/3']);
    stack.sandbox.log.reset();
    // Its second document waits for the key's budget (one call a minute): told so at once, with no call.
    const second = await open(live('4'), KEY_2);
    expect(await firstCodes(second)).toEqual(['RATE_LIMITED']);
    expect(restCalls(stack.sandbox)).toEqual([]);
    first.close();
    second.close();
  });

  it('take no stream place: with made-up keys holding as many streams as they can, a real key still subscribes', async () => {
    const held: SseStream<LiveWebsite>[] = [];
    const told: unknown[][] = [];
    // Each made-up key tries every way a stream could stay open: a skipped field, a first poll, two
    // documents past its budget. Its first event is read before the next opens.
    for (let n = 0; n < 4; n++) {
      for (const query of [SKIPPED, SKIPPED, live('1'), live('2'), live('3')]) {
        const stream = await open(query, `made-up-b${n}`);
        held.push(stream);
        if (stream.response.status === 200) told.push(await firstCodes(stream));
      }
    }
    const mine = await open(live('1'), KEY_1);
    expect(mine.response.status).toBe(200);
    expect((await mine.next())?.data?.website?.id).toBe('1');
    mine.close();
    // Every made-up key's stream was refused, by validation or by the check of its key, and ended.
    expect(told).toHaveLength(held.length);
    for (const codes of told) expect(['GRAPHQL_VALIDATION_FAILED', 'UNAUTHENTICATED']).toContain(codes[0]);
    for (const stream of held) expect(await stream.next()).toBeNull();
  });
});
