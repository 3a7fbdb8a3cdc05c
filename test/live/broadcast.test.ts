// A topic's results and streams on their own (live/broadcast.ts): pushed only when changed, the last one to
// a stream that joins, the latest only to a slow one, and the end of the last stream reported.
import { describe, expect, it } from 'vitest';
import { Broadcast } from '../../src/live/broadcast.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Broadcast', () => {
  it('pushes a result only when its text changed, keeps its text, and gives the last one to a stream that joins', async () => {
    const texts = new WeakMap<object, string>();
    const broadcast = new Broadcast(texts, () => undefined);
    const a = broadcast.join<{ n: number }>();
    expect(broadcast.started).toBe(false);
    const first = { n: 1 };
    broadcast.offer('{"n":1}', first);
    broadcast.offer('{"n":1}', { n: 1 });
    expect((await a.next()).value).toBe(first);
    expect(texts.get(first)).toBe('{"n":1}');
    expect(broadcast.isLast('{"n":1}')).toBe(true);
    const b = broadcast.join<{ n: number }>();
    expect((await b.next()).value).toBe(first);
    let taken = false;
    void a.next().then(() => void (taken = true));
    await tick();
    expect(taken).toBe(false); // the same text again was not pushed
  });

  it('holds one result not yet taken: a slow stream gets the latest', async () => {
    const broadcast = new Broadcast(new WeakMap(), () => undefined);
    const stream = broadcast.join<number>();
    for (const n of [1, 2, 3]) broadcast.offer(String(n), n);
    expect((await stream.next()).value).toBe(3);
    broadcast.deliver(9); // a notice (waiting): pushed, not kept as the last result
    expect((await stream.next()).value).toBe(9);
    expect(broadcast.isLast('3')).toBe(true);
  });

  it('ends streams after what they hold, and reports when the last one leaves', async () => {
    let empty = 0;
    const broadcast = new Broadcast(new WeakMap(), () => void empty++);
    const [a, b] = [broadcast.join<number>(), broadcast.join<number>()];
    const waiting = a.next();
    await a.return(); // the client left while it waited
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(empty).toBe(0);
    expect(broadcast.size).toBe(1);
    broadcast.offer('5', 5);
    broadcast.endAll();
    expect((await b.next()).value).toBe(5);
    expect(await b.next()).toEqual({ done: true, value: undefined });
    expect(empty).toBe(1);
    expect(broadcast.size).toBe(0);
  });
});
