// What the live pollers of several gateways share in Redis (live/redis-share.ts), against a real
// redis-server: the topic's lock (one holder, renewed by it, released, taken over once it expires),
// results between gateways (never back to their sender), the last result (kept while the lock lives,
// dropped by a final one), and the calls a key's topics make, summed across gateways until they expire.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createLiveHub, type PollOutcome } from '../../src/live/hub.js';
import { RedisLiveShare } from '../../src/live/redis-share.js';
import type { SharedResult, Topic } from '../../src/live/share.js';
import { describe, useRedis } from '../redis.js';
import { manualTimers } from './timers.js';

const redis = useRedis();
let admin: Redis;
beforeAll(() => {
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});
afterAll(() => admin?.quit());
beforeEach(async () => {
  await admin.flushall();
});

const shares: RedisLiveShare[] = [];
afterEach(async () => {
  for (const share of shares.splice(0)) await share.close();
});
const newShare = (): RedisLiveShare => {
  const share = new RedisLiveShare(redis.url, 1_000, (operation, error) => {
    throw new Error(`${operation}: ${String(error)}`);
  });
  shares.push(share);
  return share;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const topic = (key: string, document: string): Topic => ({ key, id: JSON.stringify([key, document, {}]) });

describe('RedisLiveShare', () => {
  it('gives a topic one holder: renewed by it, refused to others, released, and taken over once it expires', async () => {
    const [a, b] = [newShare(), newShare()];
    const dashboard = topic('k1', '{ website(id: 1) { id } }');
    expect(await a.claim(dashboard, 300)).toBe(true);
    expect(await b.claim(dashboard, 300)).toBe(false);
    expect(await a.claim(dashboard, 300)).toBe(true);
    await a.release(dashboard);
    expect(await b.claim(dashboard, 300)).toBe(true);
    expect(await a.claim(dashboard, 300)).toBe(false);
    // A's release of a lock it no longer holds leaves B's alone.
    await a.release(dashboard);
    expect(await a.claim(dashboard, 300)).toBe(false);
    // B dies (never renews): its lock expires and A takes the topic.
    await sleep(400);
    expect(await a.claim(dashboard, 300)).toBe(true);
    // Nothing names the document in clear, nor the key: only the topic's key id (a keyed hash in the
    // gateway: use-live.ts), as the hash tag that keeps a key's live state in one slot of a cluster.
    const names = await admin.keys('*');
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^agw:live:[a-z]+:\{k1\}(:[\w-]+)?$/);
    expect(names.join(' ')).not.toMatch(/website/);
  });

  it("sends results to the other gateways' listeners, keeps the last one, and a final one drops it", async () => {
    const [a, b] = [newShare(), newShare()];
    const dashboard = topic('k1', '{ website(id: 2) { id } }');
    const toA: SharedResult[] = [];
    const toB: SharedResult[] = [];
    const stopA = a.listen(dashboard, (result) => toA.push(result));
    b.listen(dashboard, (result) => toB.push(result));
    await sleep(100); // the subscriptions reach Redis
    await a.publish(dashboard, { text: '{"data":1}' }, 5_000);
    await a.publish(dashboard, { text: '{"data":2}' }, 5_000);
    await waitFor(() => toB.length === 2);
    expect(toB).toEqual([{ text: '{"data":1}' }, { text: '{"data":2}' }]);
    expect(toA).toEqual([]); // never back to the sender
    expect(await b.last(dashboard)).toBe('{"data":2}');
    // The holder renews the last result with its lock; once neither is renewed, both are gone.
    expect(await a.claim(dashboard, 200)).toBe(true);
    expect(await admin.pttl((await admin.keys('*last*'))[0] as string)).toBeLessThanOrEqual(200);
    await b.publish(dashboard, { text: '{"errors":[]}', final: true, endsKey: true }, 5_000);
    await waitFor(() => toA.length === 1);
    expect(toA).toEqual([{ text: '{"errors":[]}', final: true, endsKey: true }]);
    expect(await a.last(dashboard)).toBeNull();
    stopA();
    await a.publish(dashboard, { text: '{"data":3}' }, 5_000);
    await b.publish(dashboard, { text: '{"data":4}' }, 5_000);
    await sleep(100);
    expect(toA).toHaveLength(1);
  });

  it("sums the calls of a key's topics across gateways, each counting until its time runs out", async () => {
    const [a, b] = [newShare(), newShare()];
    const dashboard = topic('k1', 'dashboard');
    const realtime = topic('k1', 'realtime');
    const otherKey = topic('k2', 'dashboard');
    expect(await a.keyCalls(dashboard, 3, 300)).toBe(3);
    expect(await b.keyCalls(realtime, 2, 5_000)).toBe(5);
    expect(await b.keyCalls(otherKey, 7, 5_000)).toBe(7);
    // A topic's latest poll replaces its earlier one.
    expect(await a.keyCalls(dashboard, 1, 300)).toBe(3);
    await sleep(400);
    // The dashboard's calls ran out (its poller stopped without a word): only the realtime topic's count.
    expect(await b.keyCalls(realtime, 2, 5_000)).toBe(2);
    // A release takes the topic's calls out at once.
    expect(await a.claim(dashboard, 5_000)).toBe(true);
    expect(await a.keyCalls(dashboard, 4, 5_000)).toBe(6);
    await a.release(dashboard);
    expect(await b.keyCalls(realtime, 2, 5_000)).toBe(2);
  });

  it("counts a key's calls of the last minute across gateways, reservations given back included", async () => {
    const [a, b] = [newShare(), newShare()];
    const key = `k-${Math.random()}`;
    const first = await a.spend(key, 3);
    expect(first.calls).toBe(3);
    const second = await b.spend(key, 2);
    expect(second.calls).toBe(5);
    expect(second.entry).not.toBe(first.entry);
    // Given back to the entry that reserved them, from either gateway.
    expect((await b.spend(key, -1, first.entry)).calls).toBe(4);
    expect((await b.spend(`${key}-other`, 7)).calls).toBe(7);
    const spent = await a.spend(key, 0, first.entry);
    expect(spent).toMatchObject({ calls: 4, entry: first.entry });
    // The oldest call counted leaves the window a minute after it was made: now, less the test's moments.
    expect(spent.oldestLeavesInMs).toBeGreaterThan(55_000);
    expect(spent.oldestLeavesInMs).toBeLessThanOrEqual(60_000);
    // An entry given back whole is gone; giving back to it again changes nothing.
    expect((await a.spend(key, -2, second.entry)).calls).toBe(2);
    expect((await a.spend(key, -2, second.entry)).calls).toBe(2);
  });
});

describe('live hubs on one Redis', () => {
  const counting = (calls: number, value: () => unknown) => {
    let polls = 0;
    const poll = async (): Promise<PollOutcome<unknown>> => {
      polls++;
      return { result: value(), upstreamCalls: calls, final: false };
    };
    return { poll, polls: () => polls };
  };

  it("poll a topic on one gateway only, the other's streams pushed what it polls", async () => {
    const [timersA, timersB] = [manualTimers(), manualTimers()];
    const a = createLiveHub({ intervalMs: 1_000, share: newShare(), setTimer: timersA.setTimer, now: () => 0 });
    const b = createLiveHub({ intervalMs: 1_000, share: newShare(), setTimer: timersB.setTimer, now: () => 0 });
    let figure = 1;
    const [onA, onB] = [counting(1, () => figure), counting(1, () => figure)];
    const dashboard = topic('k1', 'dashboard');
    const streamA = a.subscribe(dashboard, onA.poll);
    expect((await streamA.next()).value).toBe(1);
    const streamB = b.subscribe(dashboard, onB.poll);
    expect((await streamB.next()).value).toBe(1); // the last result, from Redis
    await waitFor(() => timersB.delays().length === 1);
    timersB.fire(); // B tries the lock at its interval: A holds it
    await sleep(50);
    expect(onB.polls()).toBe(0);
    figure = 2;
    timersA.fire();
    expect((await streamA.next()).value).toBe(2);
    expect((await streamB.next()).value).toBe(2);
    expect(onA.polls()).toBe(2);
    // A's last stream leaves: it lets go of the lock, and B polls at its next try.
    await streamA.return();
    await sleep(50);
    figure = 3;
    await waitFor(() => timersB.delays().length === 1);
    timersB.fire();
    expect((await streamB.next()).value).toBe(3);
    expect(onB.polls()).toBe(1);
    await streamB.return();
    await Promise.all([a.close(), b.close()]);
  });

  it("stretch the interval by the calls a minute of the key's topics on every gateway", async () => {
    const [timersA, timersB] = [manualTimers(), manualTimers()];
    const options = { intervalMs: 1_000, callsPerMinute: 60 };
    const a = createLiveHub({ ...options, share: newShare(), setTimer: timersA.setTimer, now: () => 0 });
    const b = createLiveHub({ ...options, share: newShare(), setTimer: timersB.setTimer, now: () => 0 });
    const streamA = a.subscribe(topic('k1', 'dashboard'), counting(3, () => 'a').poll);
    await streamA.next();
    // Alone, 3 calls at 60 a minute: one poll every 3 s.
    expect(timersA.delays()).toEqual([3_000]);
    const streamB = b.subscribe(topic('k1', 'realtime'), counting(2, () => 'b').poll);
    await streamB.next();
    // Both of the key's topics, on two gateways: 5 calls a poll between them, every 5 s.
    expect(timersB.delays()).toEqual([5_000]);
    timersA.fire();
    await waitFor(() => timersA.delays().length === 1);
    expect(timersA.delays()).toEqual([5_000]);
    await Promise.all([streamA.return(), streamB.return()]);
    await Promise.all([a.close(), b.close()]);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

describe('RedisLiveShare, with what it did not write', () => {
  it('drops a message on a topic channel that is not one of its own (not JSON, not a result)', async () => {
    const a = newShare();
    const hub = createLiveHub({ intervalMs: 60_000, share: a });
    const dashboard = topic('k9', 'dashboard');
    const stream = hub.subscribe(dashboard, async () => ({ result: { data: 1 }, upstreamCalls: 0, final: false }));
    expect((await stream.next()).value).toEqual({ data: 1 });
    const channel = (await admin.pubsub('CHANNELS', '*')).find((name) => String(name).startsWith('agw:live:')) as string;
    expect(channel).toBeDefined();
    for (const junk of ['not json', '{"text": 5}', '{"from":"x","text":"{broken"}', 'null']) await admin.publish(channel, junk);
    await admin.publish(channel, JSON.stringify({ from: 'another gateway', text: '{"data":2}' }));
    expect((await stream.next()).value).toEqual({ data: 2 });
    await stream.return();
    await hub.close();
  });
});
