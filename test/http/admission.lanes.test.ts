// The admission's lines over a real node:http server, with handlers that hold their slot until the test
// lets them answer: which requests are being worked on is then exact, whatever the machine's speed.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEYLESS_MAX_ACTIVE, KEYLESS_PER_SECOND, STRANGER_TURN, createAdmission, type Lane } from '../../src/http/admission.js';
import { until } from '../fixture.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface Held {
  /** Names of the requests being worked on, in the order they started. */
  running: string[];
  started: string[];
  /** performance.now() at each start, in the same order. */
  startedAt: number[];
  /** Requests waiting in the admission's lines. */
  queued: number;
  /** Answers a running request (its slot frees up). */
  finish(name: string): void;
  /** `answerAtOnce`: the handler answers as soon as it starts. */
  send(name: string, lane: Lane, answerAtOnce?: boolean): Promise<number>;
}

async function serve(maxActive: number, maxQueued = 100, keylessPerSecond = KEYLESS_PER_SECOND): Promise<Held> {
  const running = new Map<string, ServerResponse>();
  const started: string[] = [];
  const startedAt: number[] = [];
  const admission = createAdmission({
    maxActive,
    maxQueued,
    maxWaitMs: 10_000,
    keylessPerSecond,
    reject: (_req, res) => {
      res.writeHead(503).end();
    },
  });
  server = createServer((req, res) => {
    const name = String(req.headers['x-name']);
    admission.admit(
      req,
      res,
      () => {
        running.set(name, res);
        started.push(name);
        startedAt.push(performance.now());
        if (req.headers['x-answer'] === 'now') held.finish(name);
      },
      req.headers['x-lane'] as Lane,
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const held: Held = {
    get running() {
      return [...running.keys()];
    },
    started,
    startedAt,
    get queued() {
      return admission.queued;
    },
    finish(name) {
      running.get(name)?.writeHead(200).end();
      running.delete(name);
    },
    send: (name, lane, answerAtOnce = false) =>
      fetch(`http://127.0.0.1:${port}/`, {
        headers: { 'x-name': name, 'x-lane': lane, ...(answerAtOnce ? { 'x-answer': 'now' } : {}) },
      }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      }),
  };
  return held;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('admission lines', () => {
  it('works on KEYLESS_MAX_ACTIVE requests without a key at once; requests with one take the other slots', async () => {
    expect(KEYLESS_MAX_ACTIVE).toBe(1);
    const held = await serve(4);
    const answers = ['a', 'b', 'c'].map((name) => held.send(name, 'keyless'));
    await pause(100);
    expect(held.running).toEqual(['a']);
    const keyed = [held.send('s', 'stranger'), held.send('k', 'known')];
    await pause(100);
    expect(held.running.sort()).toEqual(['a', 'k', 's']);
    held.finish('a');
    await pause(100);
    expect(held.running.sort()).toEqual(['b', 'k', 's']);
    for (const name of ['b', 'k', 's']) held.finish(name);
    await pause(100);
    held.finish('c');
    expect(await Promise.all([...answers, ...keyed])).toEqual([200, 200, 200, 200, 200]);
    expect(held.started).toEqual(['a', 's', 'k', 'b', 'c']);
  });

  it(`gives strangers one freed slot in ${STRANGER_TURN} while known requests wait, all of them when none does`, async () => {
    const held = await serve(1);
    const answers = [held.send('first', 'known')];
    await pause(50);
    for (const [name, lane] of [
      ['s1', 'stranger'],
      ['n1', 'keyless'],
      ['k1', 'known'],
      ['k2', 'known'],
      ['k3', 'known'],
      ['k4', 'known'],
    ] as const) {
      answers.push(held.send(name, lane));
      await pause(20);
    }
    for (let i = 0; i < 7; i++) {
      await pause(50);
      expect(held.running).toHaveLength(1);
      held.finish(held.running[0] as string);
    }
    expect(await Promise.all(answers)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(held.started).toEqual(['first', 'k1', 'k2', 'k3', 's1', 'k4', 'n1']);
  });

  it('makes room in a full line by turning away the last to come with less of a key', async () => {
    const held = await serve(1, 3);
    const first = held.send('first', 'known');
    await pause(50);
    const waiting = { s: held.send('s', 'stranger'), n1: held.send('n1', 'keyless') };
    await pause(20);
    const n2 = held.send('n2', 'keyless');
    await pause(50);
    // Full: another keyless request is turned away itself; a stranger turns away n2, a known one n1.
    expect(await held.send('n3', 'keyless')).toBe(503);
    const s2 = held.send('s2', 'stranger');
    expect(await n2).toBe(503);
    const k = held.send('k', 'known');
    expect(await waiting.n1).toBe(503);
    for (let i = 0; i < 4; i++) {
      await pause(50);
      held.finish(held.running[0] as string);
    }
    expect(await Promise.all([first, waiting.s, s2, k])).toEqual([200, 200, 200, 200]);
    expect(held.started).toEqual(['first', 'k', 's', 's2']);
  });

  it('sets no timer for a request without a key that waits for a slot, not for the bucket: it starts when one frees', async () => {
    // A timer for a bucket that is full came out negative: node ran it after 1 ms, with a warning.
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const held = await serve(1);
      const first = held.send('first', 'known');
      await until('the first request running', () => held.running.length === 1);
      const keyless = held.send('n', 'keyless');
      await until('the keyless request in line', () => held.queued === 1);
      expect(held.running).toEqual(['first']);
      held.finish('first');
      await until('the keyless request running', () => held.running.includes('n'));
      expect(held.running).toEqual(['n']);
      held.finish('n');
      expect(await Promise.all([first, keyless])).toEqual([200, 200]);
      expect(timers.mock.calls.map(([, ms]) => ms).filter((ms) => typeof ms === 'number' && ms < 0)).toEqual([]);
    } finally {
      timers.mockRestore();
    }
  });

  it('starts at most keylessPerSecond requests without a key a second, after a burst of as many', async () => {
    const held = await serve(4, 100, 10);
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => held.send(`n${i}`, 'keyless', true)));
    expect(answers.every((status) => status === 200)).toBe(true);
    // 10 at once, then one every 100 ms: the 25th starts about 1.5 s after the first.
    const spread = (held.startedAt[24] as number) - (held.startedAt[0] as number);
    expect(spread).toBeGreaterThanOrEqual(1_400);
    // A token bucket's bound, whatever the machine's load: between any two starts, at most the burst
    // and what the rate gave back meanwhile (and one token on its way). A late start may be followed
    // closely by the next one, as the tokens saved meanwhile allow, never by more.
    const over: string[] = [];
    for (let i = 0; i < held.startedAt.length; i++) {
      for (let j = i + 1; j < held.startedAt.length; j++) {
        const ms = (held.startedAt[j] as number) - (held.startedAt[i] as number);
        if (j - i + 1 > 10 + 1 + (10 * ms) / 1_000) over.push(`${j - i + 1} starts in ${ms.toFixed(0)} ms`);
      }
    }
    expect(over).toEqual([]);
    // Requests with a key are not held back meanwhile.
    expect(await held.send('k', 'stranger', true)).toBe(200);
  });
});
