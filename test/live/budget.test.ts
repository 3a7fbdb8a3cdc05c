// The key's live budget covers every poll, a topic's first one included: closing and reopening streams
// on new documents, under any spelling of the key, cannot make its polls exceed LIVE_CALLS_PER_MIN. A
// new topic past the budget waits for its first poll, and its streams are told so, as on a 429.
import { afterEach, describe, expect, it } from 'vitest';
import { createLiveHub, type PollOutcome } from '../../src/live/hub.js';
import { KEY_1, startStack, type Stack } from '../fixture.js';
import { openSubscription, type SseStream } from './sse.js';
import { manualTimers } from './timers.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the key's live budget", () => {
  it('holds under topic churn: new documents every half second make at most LIVE_CALLS_PER_MIN calls, and the waiting are told', {
    timeout: 30_000,
  }, async () => {
    stack = await startStack({ env: { LIVE_CALLS_PER_MIN: '30', LIVE_INTERVAL_S: '1', LIVE_MAX_STREAMS_PER_KEY: '100' } });
    const { endpoint, sandbox } = stack;
    const spellings = ['Bearer', 'bearer', 'BEARER'];
    let open: SseStream<{ website: { id: string } | null }>[] = [];
    const firstEvents: Promise<unknown>[] = [];
    // Eight seconds of churn: ten streams on ten new documents (one upstream call a poll), every half second.
    for (let round = 0; round < 16; round++) {
      for (const stream of open) stream.close();
      open = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          openSubscription<{ website: { id: string } | null }>(
            endpoint,
            { query: `subscription { round${round}doc${i}: website(id: "1") { id } }` },
            null,
            `${spellings[i % 3]} ${KEY_1}`,
          ),
        ),
      );
      for (const stream of open) firstEvents.push(stream.next(2_000).catch(() => null));
      await pause(500);
    }
    const polls = sandbox.log.entries.filter((entry) => entry.path === '/api/v1/websites/1').length;
    // The other calls check the key, not known yet, for the first streams (a list of its websites).
    const checks = sandbox.log.entries.filter((entry) => entry.path === '/api/v1/websites').length;
    for (const stream of open) stream.close();
    // One minute's budget, whatever the streams did (a poll's calls count before it starts).
    expect(polls).toBeGreaterThan(0);
    expect(polls).toBeLessThanOrEqual(30);
    expect(sandbox.log.count).toBe(polls + checks);
    expect(checks).toBeLessThanOrEqual(10);
    // The topics past the budget: their first event says the key's polls wait, with when to expect a result.
    const told = (await Promise.all(firstEvents)) as ({ errors?: { extensions?: { code?: string; retryAfter?: number } }[] } | null)[];
    const waiting = told.filter((event) => event?.errors?.[0]?.extensions?.code === 'RATE_LIMITED');
    expect(waiting.length).toBeGreaterThan(0);
    for (const event of waiting) expect(event?.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
  });

  it('slides: no 60 s, wherever it starts, holds more than LIVE_CALLS_PER_MIN calls', async () => {
    const timers = manualTimers();
    let clock = 9_900;
    const polledAt: number[] = [];
    const hub = createLiveHub({ intervalMs: 3_600_000, callsPerMinute: 30, setTimer: timers.setTimer, now: () => clock });
    const poll = async (): Promise<PollOutcome<number>> => {
      polledAt.push(clock);
      return { result: clock, upstreamCalls: 1, final: false };
    };
    const open = (round: number) =>
      Array.from({ length: 30 }, (_, n) => hub.subscribe({ key: 'k', id: `k/${round}/${n}` }, poll, (retryAfterS) => -retryAfterS));
    const first = open(1);
    for (const stream of first) expect((await stream.next()).value).toBe(9_900);
    await Promise.all(first.map((stream) => stream.return()));
    // 50.1 s on, a new minute for counts in 10-second steps, but not for the 60 s that began at 9.9 s:
    // thirty new topics wait, told to expect their first result in 10 s.
    clock = 60_000;
    const second = open(2);
    for (const stream of second) expect((await stream.next()).value).toBe(-10);
    expect(polledAt).toHaveLength(30);
    // Once the first calls have left the window, the waiting topics poll.
    clock = 69_900;
    timers.fire();
    for (const stream of second) expect((await stream.next()).value).toBe(69_900);
    expect(polledAt).toHaveLength(60);
    for (const start of polledAt) {
      expect(polledAt.filter((at) => at >= start && at < start + 60_000).length).toBeLessThanOrEqual(30);
    }
    await Promise.all(second.map((stream) => stream.return()));
  });
});
