// Event streams as HTTP sees them: they hold no request slot but have their own bounds, they end at
// LIVE_MAX_LIFETIME_S, and they close when the gateway drains.
import { describe, expect, it } from 'vitest';
import { KEY_1, KEY_2, dataOf, startStack, useStack } from '../fixture.js';
import { openSubscription } from './sse.js';

interface LiveWebsite {
  website: { id: string };
}

const LIVE_DASHBOARD = `subscription Live($id: ID!) {
  website(id: $id) { id domain favorite today: stats(name: VISITOR, period: TODAY) { nodes { value count } } }
}`;

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
    const a = await open('1', KEY_1);
    const b = await open('2', KEY_1);
    await a.next();
    await b.next();
    // MAX_ACTIVE_REQUESTS is 1 and two streams are open: a query still gets in.
    expect(dataOf(await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }')).website.id).toBe('1');
    // A third stream of the same key ends at once.
    const third = await open('5', KEY_1);
    expect((await third.next())?.errors?.map((error) => error.extensions?.code)).toEqual(['OVERLOADED']);
    expect(await third.next()).toBeNull();
    // Another key's stream takes the process's third place; a fourth stream is turned away with a 503.
    const other = await open('3', KEY_2);
    expect((await other.next())?.data?.website.id).toBe('3');
    const fourth = await open('3', KEY_2);
    expect(fourth.response.status).toBe(503);
    // LIVE_MAX_LIFETIME_S: each stream completes by then, for its client to subscribe again.
    expect(await a.next(5_000)).toBeNull();
    expect(await other.next(5_000)).toBeNull();
    b.close();
  });
});

describe('drain', () => {
  it('completes open streams at once, so that their clients resubscribe to another replica', async () => {
    const stack = await startStack({ env: { LIVE_INTERVAL_S: '60', DRAIN_DELAY_MS: '0' } });
    try {
      const stream = await openSubscription<LiveWebsite>(stack.endpoint, { query: LIVE_DASHBOARD, variables: { id: '1' } }, KEY_1);
      expect((await stream.next())?.data?.website.id).toBe('1');
      const drained = stack.gateway.drain();
      expect(await stream.next(5_000)).toBeNull();
      await drained;
    } finally {
      await stack.close();
    }
  });
});
