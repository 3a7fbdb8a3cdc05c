// A hub's use of a share (live/share.ts) on its own: how long locks live, and each call's failure reported
// and answered as without a share. The Redis share itself is tested against redis-server in
// redis-share.test.ts.
import { describe, expect, it } from 'vitest';
import { type LiveShare, SharedTopics, type Topic } from '../../src/live/share.js';

const topic: Topic = { key: 'k', id: 'k/doc' };
const down = () => Promise.reject(new Error('down'));

/** A share whose every call fails, recording the lifetimes it was asked for. */
function failingShare(): LiveShare & { ttls: number[]; listener?: (result: { text: string }) => void } {
  const share = {
    ttls: [] as number[],
    listener: undefined as ((result: { text: string }) => void) | undefined,
    claim: (_topic: Topic, ttlMs: number) => {
      share.ttls.push(ttlMs);
      return down();
    },
    release: down,
    publish: down,
    last: down,
    keyCalls: down,
    spend: down,
    listen: (_topic: Topic, onResult: (result: { text: string }) => void) => {
      share.listener = onResult;
      return () => undefined;
    },
    close: async () => undefined,
  };
  return share;
}

describe('SharedTopics', () => {
  it('keeps a lock for the wait before the next poll (the interval at least) plus a margin', () => {
    const shared = new SharedTopics(failingShare(), 1_000, () => undefined);
    expect(shared.lockMs(0)).toBe(11_000);
    expect(shared.lockMs(30_000)).toBe(40_000);
    expect(new SharedTopics(failingShare(), 15_000, () => undefined).lockMs(0)).toBe(30_000);
  });

  it('answers a failing share as none: this gateway polls, counts its own calls, has no last result', async () => {
    const errors: string[] = [];
    const share = failingShare();
    const shared = new SharedTopics(share, 1_000, (operation) => void errors.push(operation));
    expect(await shared.claim(topic, 20_000)).toBe(true);
    expect(share.ttls).toEqual([30_000]);
    expect(await shared.keyCalls(topic, 2, 60_000, 7)).toBe(7);
    expect(await shared.last(topic)).toBeNull();
    expect(errors).toEqual(['live claim', 'live budget', 'live last']);
  });

  it('reports the calls nothing waits for, and settled() waits for them', async () => {
    const errors: string[] = [];
    const shared = new SharedTopics(failingShare(), 1_000, (operation) => void errors.push(operation));
    shared.publish(topic, { text: '1' }, 0);
    shared.renew(topic, 0);
    void shared.release(topic);
    await shared.settled();
    expect(errors.sort()).toEqual(['live claim', 'live publish', 'live release']);
  });

  it('drops a result its listener throws on, reporting it', () => {
    const errors: string[] = [];
    const share = failingShare();
    const shared = new SharedTopics(share, 1_000, (operation) => void errors.push(operation));
    shared.listen(topic, (result) => JSON.parse(result.text));
    expect(() => share.listener?.({ text: 'not json' })).not.toThrow();
    expect(errors).toEqual(['live message']);
  });
});
