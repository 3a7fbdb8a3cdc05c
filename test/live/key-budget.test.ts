// The key's budget on its own (live/key-budget.ts): the calls of the last minute as a sliding window of
// entries, a poll counted before it starts and given back past the budget, the correction once it is over
// (on its own entry), and the wait it sets.
import { describe, expect, it } from 'vitest';
import { type Spent, WINDOW_MS, createKeyBudget, localLedger } from '../../src/live/key-budget.js';

describe('localLedger', () => {
  it('sums a key’s calls of the 60 s before now, forgets each entry as it leaves them, and keeps keys apart', () => {
    let at = 0;
    const ledger = localLedger(() => at);
    const first = ledger('a', 3);
    expect(first).toMatchObject({ calls: 3, oldestLeavesInMs: WINDOW_MS });
    at = 12_500;
    expect(ledger('a', 2)).toMatchObject({ calls: 5, oldestLeavesInMs: WINDOW_MS - 12_500 });
    expect(ledger('b', 1).calls).toBe(1);
    // A correction changes its own entry, not the present moment.
    expect(ledger('a', -1, first.entry).calls).toBe(4);
    at = WINDOW_MS; // the first entry (at 0) has left the window; the one at 12.5 s has not
    expect(ledger('a', 0).calls).toBe(2);
    at = WINDOW_MS + 12_500;
    expect(ledger('a', 0)).toMatchObject({ calls: 0, oldestLeavesInMs: WINDOW_MS });
  });

  it('holds no more than it was given in any 60 s, whatever the moments (no bucket edges)', () => {
    let at = 0;
    const ledger = localLedger(() => at);
    for (let i = 0; i < 30; i++) {
      at = 55_000 + i * 100;
      ledger('k', 1);
    }
    at = 61_000; // 6 s after the first: all 30 are still within the window
    expect(ledger('k', 0).calls).toBe(30);
    at = 115_050; // the first one left at 115 s, the rest not yet
    expect(ledger('k', 0).calls).toBe(29);
  });
});

describe('createKeyBudget', () => {
  const errors: string[] = [];
  const options = (callsPerMinute: number, sharedSpend?: (key: string, calls: number, entry?: string) => Promise<Spent>) => ({
    callsPerMinute,
    intervalMs: 1_000,
    now: () => 0,
    sharedSpend,
    onShareError: (operation: string) => void errors.push(operation),
  });

  it('counts each poll before it starts (one for a first), refuses one past the budget and gives its calls back', async () => {
    const budget = createKeyBudget(options(5));
    expect(await budget.reserve('k', 0)).toMatchObject({ granted: true, reserved: 1 });
    expect(await budget.reserve('k', 3)).toMatchObject({ granted: true, reserved: 3 });
    expect(await budget.reserve('k', 2)).toEqual({ granted: false, retryInMs: WINDOW_MS });
    // Given back: one more call still fits (5 of 5), another does not.
    expect(await budget.reserve('k', 0)).toMatchObject({ granted: true, reserved: 1 });
    expect((await budget.reserve('k', 0)).granted).toBe(false);
    expect((await budget.reserve('other', 0)).granted).toBe(true);
  });

  it('lets a poll alone past the budget run: a budget smaller than one poll never stops a key for good', async () => {
    const budget = createKeyBudget(options(2));
    expect(await budget.reserve('k', 5)).toMatchObject({ granted: true, reserved: 5 });
  });

  it('corrects the count by what the poll made once it is over', async () => {
    const budget = createKeyBudget(options(4));
    const first = await budget.reserve('k', 3);
    if (!first.granted) throw new Error('refused');
    budget.settle('k', 3, 0, first.entry); // aborted: all given back
    const second = await budget.reserve('k', 4);
    expect(second).toMatchObject({ granted: true, reserved: 4 });
    if (!second.granted) throw new Error('refused');
    budget.settle('k', 4, 2, second.entry);
    expect(await budget.reserve('k', 2)).toMatchObject({ granted: true, reserved: 2 });
    expect((await budget.reserve('k', 0)).granted).toBe(false);
  });

  it('waits the interval at least, the key’s share of the minute, or the backoff, whichever is longest', () => {
    const budget = createKeyBudget(options(30));
    expect(budget.delayFor(0, 0)).toBe(1_000);
    expect(budget.delayFor(10, 0)).toBe(20_000);
    expect(budget.delayFor(10, 45_000)).toBe(45_000);
  });

  it('counts on the share when there is one, and here when it fails', async () => {
    const spent: [string, number, string | undefined][] = [];
    let failing = false;
    const budget = createKeyBudget(
      options(2, async (key, calls, entry) => {
        if (failing) throw new Error('down');
        spent.push([key, calls, entry]);
        return { calls: 100, entry: 'e1', oldestLeavesInMs: 7 };
      }),
    );
    expect(await budget.reserve('k', 1)).toEqual({ granted: false, retryInMs: 7 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(spent).toEqual([
      ['k', 1, undefined],
      ['k', -1, 'e1'],
    ]);
    failing = true;
    errors.length = 0;
    expect(await budget.reserve('k', 1)).toMatchObject({ granted: true, reserved: 1 });
    expect(errors).toEqual(['live budget']);
  });
});
