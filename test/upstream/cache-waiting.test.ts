// How the read cache waits (upstream/cache-waiting.ts): a failing store is a miss, a slow one is given up
// at the request's budget, and concurrent requests join one call in flight.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Abandoned, joinOrMake, safeStore, withinBudget } from '../../src/upstream/cache-waiting.js';

describe('safeStore and withinBudget', () => {
  it('answers a failing store call as undefined, telling what failed', async () => {
    const errors: string[] = [];
    const safely = safeStore((operation) => void errors.push(operation));
    expect(await safely('get', () => Promise.reject(new Error('down')))).toBeUndefined();
    expect(await safely('get', async () => 1)).toBe(1);
    expect(errors).toEqual(['get']);
  });

  it('gives up on the store at the budget, for all of a request’s calls together', async () => {
    const errors: string[] = [];
    const ask = withinBudget(
      safeStore((operation) => void errors.push(operation)),
      50,
    );
    // Had it waited for the store, the answer would be its 1, two seconds on.
    expect(await ask('get', () => new Promise((resolve) => setTimeout(() => resolve(1), 2_000)))).toBeUndefined();
    expect(errors).toEqual(['get']);
    // The budget is spent: the next call is not even made.
    let made = false;
    expect(await ask('get', async () => (made = true))).toBeUndefined();
    expect(made).toBe(false);
    expect(await withinBudget(safeStore(undefined), undefined)('get', async () => 2)).toBe(2);
  });

  it('counts only the time its calls wait on the store: what the request waits on otherwise (the install) is not spent', async () => {
    const ask = withinBudget(safeStore(undefined), 50);
    expect(await ask('get', async () => 1)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 120)); // the install answering, past the budget's time
    expect(await ask('bump', async () => 2)).toBe(2);
    expect(ask.use().spent).toBe(false);
  });

  it('gives calls that overlap one budget together, not one each: past it, no call is made', async () => {
    const ask = withinBudget(safeStore(undefined), 50);
    const hanging = () => new Promise((resolve) => setTimeout(() => resolve(1), 2_000));
    expect(await Promise.all([ask('get', hanging), ask('get', hanging)])).toEqual([undefined, undefined]);
    expect(ask.use().spent).toBe(true);
    let made = false;
    expect(await ask('get', async () => (made = true))).toBeUndefined();
    expect(made).toBe(false);
  });

  it('takes an answer that arrived by the budget, even when a busy event loop runs the timer in the same turn', async () => {
    // A real socket's answer (an echo from another process) arrives while this loop is blocked past the
    // budget; when it runs again, timers come before I/O.
    const echo = spawn(process.execPath, [
      '-e',
      "const s = require('node:net').createServer((c) => c.pipe(c)).listen(0, '127.0.0.1', () => console.log(s.address().port))",
    ]);
    const port = await new Promise<number>((resolve) => echo.stdout.once('data', (chunk) => resolve(Number(String(chunk)))));
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    try {
      // Up to three tries: one whose echo came late (a busy machine) proves nothing; without the
      // I/O-first timeout, every try loses to the timer.
      const answers: unknown[] = [];
      for (let attempt = 0; attempt < 3 && !answers.includes('pong'); attempt++) {
        const ask = withinBudget(safeStore(undefined), 20);
        const answered = ask('get', () => new Promise((resolve) => socket.once('data', (chunk) => resolve(String(chunk)))));
        socket.write('pong');
        const until = performance.now() + 300;
        while (performance.now() < until); // the loop blocked past the budget, the echo arriving meanwhile
        answers.push(await answered);
        socket.removeAllListeners('data');
      }
      expect(answers).toContain('pong');
    } finally {
      socket.destroy();
      echo.kill();
    }
  });

  it('goes on from what an earlier part of the request spent: nothing is left once it ran the budget out', async () => {
    const lookup = withinBudget(safeStore(undefined), 50);
    expect(await lookup('look', () => new Promise((resolve) => setTimeout(() => resolve(1), 2_000)))).toBeUndefined();
    const spent = lookup.use();
    expect(spent.spent).toBe(true);
    let made = false;
    expect(await withinBudget(safeStore(undefined), 50, spent)('get', async () => (made = true))).toBeUndefined();
    expect(made).toBe(false);
    // What a quick lookup spent leaves the rest.
    const quick = withinBudget(safeStore(undefined), 60_000);
    expect(await quick('look', async () => 1)).toBe(1);
    expect(quick.use()).toMatchObject({ spent: false });
    expect(await withinBudget(safeStore(undefined), 60_000, quick.use())('get', async () => 2)).toBe(2);
  });
});

describe('joinOrMake', () => {
  it('shares one call among those that come while it is in flight, and forgets it once over', async () => {
    const calls = new Map<string, Promise<number>>();
    let made = 0;
    let finish: (value: number) => void = () => undefined;
    const make = () => {
      made++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const first = joinOrMake(calls, 'a', make);
    const second = joinOrMake(calls, 'a', make);
    expect([first.joined, second.joined, made]).toEqual([false, true, 1]);
    finish(7);
    expect(await second.call).toBe(7);
    expect(calls.size).toBe(0);
    expect(joinOrMake(calls, 'a', async () => 8).joined).toBe(false);
  });

  it('tells a call dropped meanwhile (a write) that it is no longer the current one, and leaves its successor', async () => {
    const calls = new Map<string, Promise<string>>();
    let finish: () => void = () => undefined;
    let wasCurrent: boolean | undefined;
    const dropped = joinOrMake(calls, 'a', async (current) => {
      await new Promise<void>((resolve) => (finish = resolve));
      wasCurrent = current();
      return 'old';
    });
    calls.delete('a');
    const successor = joinOrMake(calls, 'a', () => new Promise<string>(() => undefined));
    finish();
    expect(await dropped.call).toBe('old');
    expect(wasCurrent).toBe(false);
    expect(calls.get('a')).toBe(successor.call);
  });
});

describe('Abandoned', () => {
  it('knows the errors of calls whose request went away, and nothing else', () => {
    const abandoned = new Abandoned();
    const error = new Error('aborted');
    abandoned.add(error);
    abandoned.add('not an object');
    expect(abandoned.has(error)).toBe(true);
    expect(abandoned.has(new Error('aborted'))).toBe(false);
    expect(abandoned.has('not an object')).toBe(false);
  });
});
