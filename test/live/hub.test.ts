// The shared pollers, driven by a hand-run timer: who starts and stops a poller, what a subscriber is
// pushed, and how long a key's polls wait.
import { describe, expect, it } from 'vitest';
import { createLiveHub, type PollOutcome } from '../../src/live/hub.js';
import { manualTimers } from './timers.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A poll function answering the values given, one a poll, counting its calls. */
function scripted(values: number[], calls = 1) {
  let polls = 0;
  const poll = async (): Promise<PollOutcome<number>> => ({
    result: values[Math.min(polls++, values.length - 1)] as number,
    upstreamCalls: calls,
    final: false,
  });
  return { poll, polls: () => polls };
}

describe('createLiveHub', () => {
  it('polls once for every subscriber of a topic; a later one gets the last result at once', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const source = scripted([7]);
    const topic = { key: 'k', id: 'k/doc' };
    const a = hub.subscribe(topic, source.poll);
    expect((await a.next()).value).toBe(7);
    const b = hub.subscribe(topic, source.poll);
    expect((await b.next()).value).toBe(7);
    expect(source.polls()).toBe(1);
    expect(hub.pollers).toBe(1);
    await a.return();
    await b.return();
    expect(hub.pollers).toBe(0);
  });

  it("keeps each pushed result's JSON text, the same object going to every subscriber of the topic", async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const poll = async (): Promise<PollOutcome<{ data: { n: number } }>> => ({
      result: { data: { n: 1 } },
      upstreamCalls: 0,
      final: false,
    });
    const topic = { key: 'k', id: 'k/text' };
    const [a, b] = [hub.subscribe(topic, poll), hub.subscribe(topic, poll)];
    const [first, second] = [(await a.next()).value, (await b.next()).value];
    expect(second).toBe(first);
    expect(hub.textOf(first)).toBe('{"data":{"n":1}}');
    expect(hub.textOf({ data: { n: 1 } })).toBeUndefined();
    await a.return();
    await b.return();
  });

  it('pushes a result only when it changed, and a slow subscriber only the latest', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const source = scripted([1, 1, 2, 3]);
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, source.poll);
    expect((await stream.next()).value).toBe(1);
    for (let i = 0; i < 3; i++) {
      timers.fire();
      await tick();
    }
    expect(source.polls()).toBe(4);
    // 1 again was not pushed; 2 was overtaken by 3 before the subscriber asked.
    expect((await stream.next()).value).toBe(3);
    await stream.return();
  });

  it('stops polling when the last subscriber leaves and aborts the poll in flight', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    let signal: AbortSignal | undefined;
    let polls = 0;
    const poll = (given: AbortSignal): Promise<PollOutcome<number>> => {
      polls++;
      signal = given;
      if (polls === 1) return Promise.resolve({ result: 1, upstreamCalls: 1, final: false });
      return new Promise((_, reject) => given.addEventListener('abort', () => reject(new Error('aborted'))));
    };
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, poll);
    expect((await stream.next()).value).toBe(1);
    timers.fire();
    await tick();
    expect(polls).toBe(2);
    expect(signal?.aborted).toBe(false);
    await stream.return();
    expect(signal?.aborted).toBe(true);
    expect(hub.pollers).toBe(0);
    expect(timers.live()).toBe(0);
  });

  it("stretches the interval so that all of one key's pollers stay within its calls a minute", async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, callsPerMinute: 30, setTimer: timers.setTimer, now: () => 0 });
    const a = hub.subscribe({ key: 'k', id: 'k/a' }, scripted([1], 10).poll);
    await a.next();
    // One poller of 10 calls: 10 calls every 20 s is 30 a minute.
    expect(timers.delays()).toEqual([20_000]);
    const b = hub.subscribe({ key: 'k', id: 'k/b' }, scripted([1], 10).poll);
    await b.next();
    // Two pollers of 10 calls each: each waits 40 s. Another key's pollers do not count.
    expect(timers.delays()[1]).toBe(40_000);
    const other = hub.subscribe({ key: 'other', id: 'other/a' }, scripted([1], 1).poll);
    await other.next();
    expect(timers.delays()[2]).toBe(2_000);
    await Promise.all([a.return(), b.return(), other.return()]);
  });

  it("ends every stream of the key when a poll says the key is refused, and no other key's", async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const a = hub.subscribe({ key: 'k', id: 'k/a' }, scripted([1]).poll);
    const other = hub.subscribe({ key: 'other', id: 'other/a' }, scripted([1]).poll);
    await a.next();
    await other.next();
    const revoked = hub.subscribe(
      { key: 'k', id: 'k/b' },
      async (): Promise<PollOutcome<number>> => ({
        result: 401,
        upstreamCalls: 1,
        final: true,
        endsKey: true,
      }),
    );
    expect((await revoked.next()).value).toBe(401);
    expect(await a.next()).toEqual({ done: false, value: 401 });
    expect(await a.next()).toEqual({ done: true, value: undefined });
    expect(hub.streamsOf('k')).toBe(0);
    expect(hub.streamsOf('other')).toBe(1);
    await other.return();
  });

  it('polls again at the next interval after a poll that threw', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    let polls = 0;
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, async (): Promise<PollOutcome<number>> => {
      if (++polls === 1) throw new Error('socket hang up');
      return { result: 2, upstreamCalls: 1, final: false };
    });
    const next = stream.next();
    await tick();
    expect(timers.delays()).toEqual([1000]);
    timers.fire();
    expect((await next).value).toBe(2);
    await stream.return();
  });

  it('waits as long as a poll asks (a Retry-After) before the next', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, async () => ({ result: 1, upstreamCalls: 0, final: false, backoffMs: 30_000 }));
    await stream.next();
    expect(timers.delays()).toEqual([30_000]);
    await stream.return();
  });

  it('times polls from start to start: a poll that took 300 ms waits 700 ms for the next at a 1 s interval', async () => {
    const timers = manualTimers();
    let clock = 0;
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => clock });
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, async () => {
      clock += 300;
      return { result: 1, upstreamCalls: 0, final: false };
    });
    await stream.next();
    expect(timers.delays()).toEqual([700]);
    await stream.return();
  });

  it("counts every poll in the key's minute, first ones included: past it a new topic waits, and its streams are told", async () => {
    const timers = manualTimers();
    let clock = 3_000;
    const hub = createLiveHub({ intervalMs: 1000, callsPerMinute: 2, setTimer: timers.setTimer, now: () => clock });
    const a = scripted([1]);
    const b = scripted([2]);
    const c = scripted([3]);
    const first = hub.subscribe({ key: 'k', id: 'k/a' }, a.poll);
    const second = hub.subscribe({ key: 'k', id: 'k/b' }, b.poll);
    expect((await first.next()).value).toBe(1);
    expect((await second.next()).value).toBe(2);
    // Two calls this minute, the budget: a third topic does not poll, and says when it will try again.
    const third = hub.subscribe({ key: 'k', id: 'k/c' }, c.poll, (retryAfterS) => -retryAfterS);
    expect((await third.next()).value).toBe(-60);
    expect(c.polls()).toBe(0);
    // Another key has its own budget.
    const other = hub.subscribe({ key: 'other', id: 'other/a' }, scripted([9]).poll);
    expect((await other.next()).value).toBe(9);
    // A minute on, with the first two topics closed, the third polls at its retry.
    await Promise.all([first.return(), second.return()]);
    clock = 63_000;
    expect(timers.delays()).toContain(60_000);
    timers.fire();
    expect((await third.next()).value).toBe(3);
    expect(c.polls()).toBe(1);
    await Promise.all([third.return(), other.return()]);
  });

  it('ends every stream of the topic after a final result, and every stream on close', async () => {
    const timers = manualTimers();
    const hub = createLiveHub({ intervalMs: 1000, setTimer: timers.setTimer, now: () => 0 });
    const final = async (): Promise<PollOutcome<string>> => ({ result: 'gone', upstreamCalls: 1, final: true });
    const stream = hub.subscribe({ key: 'k', id: 'k/doc' }, final);
    expect(await stream.next()).toEqual({ done: false, value: 'gone' });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(hub.pollers).toBe(0);
    const open = hub.subscribe({ key: 'k', id: 'k/other' }, scripted([5]).poll);
    await open.next();
    hub.close();
    expect(await open.next()).toEqual({ done: true, value: undefined });
    expect(timers.live()).toBe(0);
  });
});
