// A live topic's memory is flat: hundreds of polls of a large result, over real HTTP (the streams) and
// real sockets (the sandbox), leave the heap where it was after the first tens; no poll hangs a listener
// on anything that outlives it (no signal gathers one per poll, no MaxListenersExceededWarning).
import { getEventListeners } from 'node:events';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { KEY_1, startStack, type Stack } from '../fixture.js';
import { openSubscription, type SseStream } from './sse.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * The live heap, in MB, after full collections, read right after the last: a turn of the event loop
 * between them lets a poll's callbacks allocate, and on a busy machine that was 11 to 20 MB of the new
 * space (garbage not collected yet) in one look of three.
 */
async function liveHeapMb(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  gc();
  return process.memoryUsage().heapUsed / 1024 ** 2;
}

const TOPICS = 20;
/**
 * About 125 KB: two aliases of six years of daily points (read once by the loaders, past days from the cache).
 * Large enough that a poll's result kept would be tens of MB over the polls below; most of a poll's time is
 * making it, so no larger.
 */
const bigSubscription = (n: number): string =>
  `subscription Big${n} { website(id: "1") { ${Array.from(
    { length: 2 },
    (_, i) => `a${i}: series(metric: VISITORS, from: "2020-01-01", to: "2026-03-15") { points { date count } }`,
  ).join(' ')} } }`;

let stack: Stack | undefined;
afterAll(async () => {
  await stack?.close();
});

describe("a live topic's memory", () => {
  it('is flat over hundreds of polls of a 125 KB result: the heap after the last is within a few MB of the heap after the first tens', {
    timeout: 60_000,
  }, async () => {
    // Every signal something listens to for `abort`, to count its listeners at the end.
    const signals = new Set<WeakRef<EventTarget>>();
    const addEventListener = EventTarget.prototype.addEventListener;
    EventTarget.prototype.addEventListener = function (this: EventTarget, ...args: Parameters<EventTarget['addEventListener']>) {
      if (args[0] === 'abort') signals.add(new WeakRef(this));
      addEventListener.apply(this, args);
    };
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    // Each poll is a query with its own log line, named after the subscription: they are counted, not kept.
    let polls = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        polls += chunk.toString().match(/"operation":"Big\d+"/g)?.length ?? 0;
        done();
      },
    });
    stack = await startStack({
      env: { CACHE: 'on', LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '100000', LIVE_MAX_STREAMS_PER_KEY: '100', MAX_COST: '5000' },
      gateway: { logger: pino({ level: 'info', base: null }, sink) },
    });
    const streams: SseStream<unknown>[] = [];
    for (let n = 0; n < TOPICS; n++) streams.push(await openSubscription(stack.endpoint, { query: bigSubscription(n) }, KEY_1));
    for (const stream of streams) expect(JSON.stringify((await stream.next(20_000))?.data).length).toBeGreaterThan(100_000);
    // Twenty topics polled every second: the first tens of polls, then two hundred more.
    while (polls < 40) await new Promise((resolve) => setTimeout(resolve, 100));
    stack.sandbox.log.reset(); // the log's entries are the test's memory, not the gateway's
    const early = await liveHeapMb();
    const afterEarly = polls;
    while (polls < afterEarly + 200) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      stack.sandbox.log.reset();
    }
    // The least of three looks, a moment apart: a poll in flight holds its result (20 of ~125 KB) while it
    // runs, which says nothing of what the topics keep; a leak (each poll's result kept) grows through all three.
    let late = Number.POSITIVE_INFINITY;
    for (let look = 0; look < 3; look++) {
      late = Math.min(late, await liveHeapMb());
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    let mostListeners = 0;
    for (const signal of signals) {
      const target = signal.deref();
      if (target) mostListeners = Math.max(mostListeners, getEventListeners(target, 'abort').length);
    }
    EventTarget.prototype.addEventListener = addEventListener;
    for (const stream of streams) stream.close();
    process.off('warning', onWarning);
    // A poll's listeners go with it: no signal gathers one per poll.
    expect(mostListeners).toBeLessThan(5);
    expect(late - early).toBeLessThan(8);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
