// What the benchmark harness's smoke tests share: their short runs, and the check that every process a
// pass started has ended.
import { afterEach, expect } from 'vitest';
import { childProcesses } from './children.js';

/**
 * Seconds of each measured run, and of its warm-up: long enough for a few dozen requests; and a quiet
 * spell of 50 ms before each (the harness's 300 ms is for long runs on a busy machine). A call of a
 * request cut off at a run's end that came later still would be counted as a retried call of the next.
 */
export const RUN = { durationSeconds: 0.2, warmupSeconds: 0.1, quietMs: 50 } as const;

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
