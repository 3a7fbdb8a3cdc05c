// One key is one key, however its header is spelt (RFC 9110: the scheme in any case, one or more
// spaces): forty spellings share one LIVE_MAX_STREAMS_PER_KEY, one cache partition, one revocation, and
// what goes upstream is `Bearer <key>`. A header that is not one Bearer token is refused, saying why.
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, postGraphQL, startStack, type Stack } from '../fixture.js';
import { openSubscription, type SseStream } from './sse.js';

/** Forty spellings of one key's header: four cases of the scheme, one to ten spaces. */
const spellings = (key: string): string[] =>
  ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) => Array.from({ length: 10 }, (_, n) => `${scheme}${' '.repeat(n + 1)}${key}`));

const LIVE = 'subscription Live($id: ID!) { website(id: $id) { id } }';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('one key, however spelt', () => {
  it('has one LIVE_MAX_STREAMS_PER_KEY for its forty spellings, and a 401 ends every one of its streams', { timeout: 30_000 }, async () => {
    stack = await startStack({ env: { LIVE_MAX_STREAMS_PER_KEY: '5', LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '6000' } });
    const { endpoint } = stack;
    const streams: SseStream<{ website: { id: string } }>[] = [];
    const codes: string[] = [];
    for (const [n, authorization] of spellings(KEY_1).entries()) {
      const stream = await openSubscription<{ website: { id: string } }>(
        endpoint,
        { query: LIVE, variables: { id: String((n % 2) + 1) } },
        null,
        authorization,
      );
      const first = await stream.next();
      if (first?.data?.website) streams.push(stream);
      else codes.push(String(first?.errors?.[0]?.extensions?.code));
    }
    expect(streams).toHaveLength(5);
    expect(codes).toEqual(Array.from({ length: 35 }, () => 'OVERLOADED'));
    stack.sandbox.revokeKey(KEY_1);
    for (const stream of streams) {
      const last = await stream.next(6_000);
      expect(last?.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
      expect(await stream.next()).toBeNull();
    }
  });

  it('has one cache partition, and goes upstream as `Bearer <key>`', async () => {
    stack = await startStack({ env: { CACHE: 'on' } });
    const query = '{ website(id: "1") { id domain } }';
    const [first, ...others] = spellings(KEY_1);
    const filled = await postGraphQL<{ website: { id: string } }>(stack.endpoint, { query }, { authorization: first as string });
    expect(filled.data?.website.id).toBe('1');
    const calls = stack.sandbox.log.count;
    for (const authorization of others.slice(0, 10)) {
      const answer = await postGraphQL<{ website: { id: string } }>(stack.endpoint, { query }, { authorization });
      expect(answer.data?.website.id).toBe('1');
      expect(answer.extensions?.cache).toMatchObject({ misses: 0 });
    }
    expect(stack.sandbox.log.count).toBe(calls);
    expect(new Set(stack.sandbox.log.entries.map((entry) => entry.headers.authorization))).toEqual(new Set([`Bearer ${KEY_1}`]));
  });

  it('refuses a header that is not one Bearer token with UNAUTHENTICATED, saying why, and calls nothing upstream', async () => {
    stack = await startStack();
    for (const authorization of [`Bearer ${KEY_1} ${KEY_1}`, `Basic ${KEY_1}`, 'Bearer', `Bearer\t${KEY_1}`, `Bearer ${KEY_1},`]) {
      const answer = await postGraphQL(stack.endpoint, { query: '{ website(id: "1") { id } }' }, { authorization });
      expect(answer.errors?.[0]?.extensions?.code, authorization).toBe('UNAUTHENTICATED');
      expect(answer.errors?.[0]?.message).toMatch(/Bearer <key>/);
      const live = await openSubscription(stack.endpoint, { query: LIVE, variables: { id: '1' } }, null, authorization);
      const refused = await live.next();
      expect(refused?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(await live.next()).toBeNull();
    }
    expect(stack.sandbox.log.count).toBe(0);
  });
});
