import { describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../../src/upstream/concurrency.js';

/** A task that finishes when told to, counting how many run at once. */
function gate(counter: { now: number; peak: number }, log: string[], name: string) {
  let finish!: (ok: boolean) => void;
  const done = new Promise<boolean>((resolve) => (finish = resolve));
  const task = async (): Promise<string> => {
    counter.now++;
    counter.peak = Math.max(counter.peak, counter.now);
    log.push(`start ${name}`);
    const ok = await done;
    counter.now--;
    if (!ok) throw new Error(`${name} failed`);
    return name;
  };
  return { task, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrencyLimit', () => {
  it('runs at most max tasks at once and starts the waiting ones in order', async () => {
    const limit = concurrencyLimit(2);
    const counter = { now: 0, peak: 0 };
    const log: string[] = [];
    const gates = ['a', 'b', 'c', 'd'].map((name) => gate(counter, log, name));
    const results = gates.map((g) => limit(g.task));
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    gates[1]!.finish(true);
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    gates[0]!.finish(false); // a failure frees its slot too
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start c', 'start d']);
    gates[2]!.finish(true);
    gates[3]!.finish(true);
    const settled = await Promise.allSettled(results);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(counter.peak).toBe(2);
  });

  it('starts a task under the limit at once, in the same tick', () => {
    const limit = concurrencyLimit(1);
    let started = false;
    void limit(async () => {
      started = true;
    });
    expect(started).toBe(true);
  });

  it('hands a freed slot to the waiting task, not to one arriving meanwhile', async () => {
    const limit = concurrencyLimit(1);
    const counter = { now: 0, peak: 0 };
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => gate(counter, log, name));
    const first = limit(a!.task);
    const second = limit(b!.task);
    await tick();
    a!.finish(true);
    await first;
    const third = limit(c!.task); // arrives after a finished, before b has started
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    b!.finish(true);
    await second;
    await tick();
    c!.finish(true);
    await third;
    expect(log).toEqual(['start a', 'start b', 'start c']);
    expect(counter.peak).toBe(1);
  });

  it('a task that throws before returning a promise rejects and frees its slot', async () => {
    const limit = concurrencyLimit(1);
    await expect(
      limit(() => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
    await expect(limit(async () => 'next')).resolves.toBe('next');
  });

  it('refuses a limit below 1', () => {
    expect(() => concurrencyLimit(0)).toThrow(RangeError);
  });
});
