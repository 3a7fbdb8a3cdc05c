// A subscription selects exactly one top-level field: `@skip` and `@include` are refused in its top-level
// selection, before anything runs (a stream whose field is skipped would poll `{}` for ever with no
// upstream call, and never learn that its key is made up). Queries and mutations keep them.
import { describe, expect, it } from 'vitest';
import { KEY_1, restCalls, useStack } from '../../fixture.js';
import { openSubscription, type SseStream } from '../../live/sse.js';

/** The codes of a stream's first event. */
async function firstCodes(stream: SseStream<unknown>): Promise<unknown[]> {
  return ((await stream.next())?.errors ?? []).map((error) => error.extensions?.code);
}

const SKIPPED = 'subscription { website(id: "1") @skip(if: true) { id } }';

describe('a subscription that selects no field', () => {
  const stack = useStack({ env: { LIVE_INTERVAL_S: '60' } });
  const open = (query: string, key: string, variables?: Record<string, unknown>) =>
    openSubscription<unknown>(stack.endpoint, { query, ...(variables ? { variables } : {}) }, key);

  it('is refused by validation, whatever hides its field (@skip, @include, on a fragment), with no upstream call', async () => {
    const documents: [string, Record<string, unknown>?][] = [
      [SKIPPED],
      ['subscription ($on: Boolean!) { website(id: "1") @include(if: $on) { id } }', { on: false }],
      ['subscription { ... on Subscription @skip(if: true) { website(id: "1") { id } } }'],
      ['subscription { ...Live @skip(if: true) } fragment Live on Subscription { website(id: "1") { id } }'],
      ['subscription { ...Live } fragment Live on Subscription { website(id: "1") @include(if: false) { id } }'],
    ];
    for (const [query, variables] of documents) {
      for (const key of [KEY_1, 'made-up-key']) {
        const stream = await open(query, key, variables);
        expect(await firstCodes(stream), query).toEqual(['GRAPHQL_VALIDATION_FAILED']);
        stream.close();
      }
    }
    expect(restCalls(stack.sandbox)).toEqual([]);
    const refused = await (await open(SKIPPED, KEY_1)).next();
    expect(refused?.errors?.[0]?.message).toBe(
      'A subscription selects exactly one top-level field: @skip is not allowed in its top-level selection.',
    );
  });

  it('keeps @skip and @include below the top level: the stream runs', async () => {
    const stream = await open('subscription { website(id: "1") { id domain @skip(if: true) } }', KEY_1);
    expect((await stream.next())?.data).toEqual({ website: { id: '1' } });
    stream.close();
  });

  it('a query or a mutation whose top-level field is skipped is still answered {} at once, and holds nothing', async () => {
    for (const query of [
      '{ website(id: "1") @skip(if: true) { id } }',
      'mutation { deleteWebsite(id: "1") @skip(if: true) { deletedId } }',
    ]) {
      const answer = await stack.gql(query, {}, 'made-up-key');
      expect(answer.status).toBe(200);
      expect(answer.data).toEqual({});
    }
    expect(restCalls(stack.sandbox)).toEqual([]);
  });
});
