// What the benchmark harness's smoke tests share: their short runs, the check that every process a pass
// started has ended, and the check of a run's upstream calls. The sandbox counts every attempt, and under
// load a read may be tried again (a connection that broke, a 502/503/504), so its count per request is at
// least the reads; the answers count one call per read (extensions.upstreamCalls), and the difference is
// the report's retriedCalls.
import { afterEach, expect } from 'vitest';
import type { Measurement } from '../../bench/index.js';
import { childProcesses } from './children.js';

/**
 * Seconds of each measured run, and of its warm-up: long enough for a few dozen requests; and a quiet
 * spell of 50 ms before each (the harness's 300 ms is for long runs on a busy machine). A call of a
 * request cut off at a run's end that came later still would be counted as a retried call of the next.
 */
export const RUN = { durationSeconds: 0.2, warmupSeconds: 0.1, quietMs: 50 } as const;

/**
 * Half as long, for the passes at 0 ms latency whose runs keep a core busy (floor, stored). A run's CPU is
 * read from /proc in 10 ms ticks; theirs read 170 to 540 ms in 0.2 s, so 0.1 s leaves them far from 0. A
 * run at 5 ms latency reads 50 ms in 0.2 s: the files that check its CPU keep RUN (the floor file's
 * scenario pass counts the rich dashboard's waves only).
 */
export const BUSY_RUN = { durationSeconds: 0.1, warmupSeconds: 0.05, quietMs: 50 } as const;

/** A pass's options with two rounds (floor and stored: the pass's own minimum, 3, is checked apart). */
export function twoRounds<T extends { rounds: number }>(options: T | null | undefined): T {
  if (!options) throw new Error('the pass was not made');
  return { ...options, rounds: 2 };
}

/** After each test of the file: every process the harness started (sandbox, gateways, floor, static server, redis-server) has ended. */
export function expectEveryProcessEnded(): void {
  afterEach(() => {
    expect(childProcesses()).toEqual([]);
  });
}

/**
 * A gateway's upstream calls: every answer says it made at least `reads` calls, most of them exactly
 * that; the sandbox saw at least as many, and the retried attempts are counted (0 or more). (Not checked
 * against each other: per request, they are averages of runs of different lengths.)
 */
export function expectCalls(m: Measurement | null | undefined, reads: number): void {
  const requests = m?.requests ?? 0;
  const byCalls = Object.entries(m?.answersByCalls ?? {});
  expect(byCalls.reduce((sum, [, count]) => sum + count, 0)).toBe(requests);
  for (const [calls] of byCalls) expect(Number(calls)).toBeGreaterThanOrEqual(reads);
  expect(m?.answersByCalls?.[reads]).toBeGreaterThan(requests / 2);
  expect(m?.reportedCallsPerRequest).toBeGreaterThanOrEqual(reads);
  expect(m?.upstreamCallsPerRequest).toBeGreaterThanOrEqual(reads);
  expect(m?.retriedCalls).toBeGreaterThanOrEqual(0);
}
