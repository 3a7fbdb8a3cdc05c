// The key's budget on its own (live/key-budget.ts): the calls of the last minute in buckets, a poll counted
// before it starts and given back past the budget, the correction once it is over, and the wait it sets.
import { describe, expect, it } from 'vitest';
import { BUCKET_MS, MINUTE_BUCKETS, createKeyBudget, localLedger } from '../../src/live/key-budget.js';

describe('localLedger', () => {
  it('sums a key’s calls over the last minute, forgets the buckets that left it, and keeps keys apart', () => {
    let at = 0;
    const ledger = localLedger(() => at);
    expect(ledger('a', 3)).toEqual({ calls: 3, nextBucketInMs: BUCKET_MS });
    at = BUCKET_MS + 2_500;
    expect(ledger('a', 2)).toEqual({ calls: 5, nextBucketInMs: BUCKET_MS - 2_500 });
    expect(ledger('b', 1).calls).toBe(1);
    at = MINUTE_BUCKETS * BUCKET_MS; // the first bucket has left the minute
    expect(ledger('a', 0).calls).toBe(2);
    expect(ledger('a', -2).calls).toBe(0);
  });
});

describe('createKeyBudget', () => {
  const errors: string[] = [];
  const options = (
    callsPerMinute: number,
    sharedSpend?: (key: string, calls: number) => Promise<{ calls: number; nextBucketInMs: number }>,
  ) => ({
    callsPerMinute,
    intervalMs: 1_000,
    now: () => 0,
    sharedSpend,
    onShareError: (operation: string) => void errors.push(operation),
  });

  it('counts each poll before it starts (one for a first), refuses one past the budget and gives its calls back', async () => {
    const budget = createKeyBudget(options(5));
    expect(await budget.reserve('k', 0)).toEqual({ granted: true, reserved: 1 });
    expect(await budget.reserve('k', 3)).toEqual({ granted: true, reserved: 3 });
    expect(await budget.reserve('k', 2)).toEqual({ granted: false, retryInMs: BUCKET_MS });
    // Given back: one more call still fits (5 of 5), another does not.
    expect(await budget.reserve('k', 0)).toEqual({ granted: true, reserved: 1 });
    expect((await budget.reserve('k', 0)).granted).toBe(false);
    expect((await budget.reserve('other', 0)).granted).toBe(true);
  });

  it('lets a poll alone past the budget run: a budget smaller than one poll never stops a key for good', async () => {
    const budget = createKeyBudget(options(2));
    expect(await budget.reserve('k', 5)).toEqual({ granted: true, reserved: 5 });
  });

  it('corrects the count by what the poll made once it is over', async () => {
    const budget = createKeyBudget(options(4));
    await budget.reserve('k', 3);
    budget.settle('k', 3, 0); // aborted: all given back
    expect(await budget.reserve('k', 4)).toEqual({ granted: true, reserved: 4 });
    budget.settle('k', 4, 2);
    expect(await budget.reserve('k', 2)).toEqual({ granted: true, reserved: 2 });
    expect((await budget.reserve('k', 0)).granted).toBe(false);
  });

  it('waits the interval at least, the key’s share of the minute, or the backoff, whichever is longest', () => {
    const budget = createKeyBudget(options(30));
    expect(budget.delayFor(0, 0)).toBe(1_000);
    expect(budget.delayFor(10, 0)).toBe(20_000);
    expect(budget.delayFor(10, 45_000)).toBe(45_000);
  });

  it('counts on the share when there is one, and here when it fails', async () => {
    const spent: [string, number][] = [];
    let failing = false;
    const budget = createKeyBudget(
      options(2, async (key, calls) => {
        if (failing) throw new Error('down');
        spent.push([key, calls]);
        return { calls: 100, nextBucketInMs: 7 };
      }),
    );
    expect(await budget.reserve('k', 1)).toEqual({ granted: false, retryInMs: 7 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(spent).toEqual([
      ['k', 1],
      ['k', -1],
    ]);
    failing = true;
    errors.length = 0;
    expect(await budget.reserve('k', 1)).toEqual({ granted: true, reserved: 1 });
    expect(errors).toEqual(['live budget']);
  });
});
