// A short run of bench/request-log.ts, so that it never rots: each way of writing the request log runs
// in a child whose stdout is a pipe; the figures come out finite and of the right sign, never their size.
import { describe, expect, it } from 'vitest';
import { LOG_WAYS, formatRequestLog, measureRequestLog } from '../../bench/request-log.js';
import { expectEveryProcessEnded } from './short.js';

describe('benchmark: the request log', () => {
  expectEveryProcessEnded();

  it('measures each way in a child, with a quick and a busy reader', async () => {
    // Both readers at once, each with children of its own: a run waits mostly for its children to end their
    // writes, and the figures are checked for their sign, never their size.
    const readers = ['quick', 'busy'] as const;
    const measured = await Promise.all(readers.map((reader) => measureRequestLog({ lines: 2_000, rounds: 1, reader })));
    for (const [i, reader] of readers.entries()) {
      const results = measured[i] ?? [];
      expect(results.map((result) => result.way)).toEqual([...LOG_WAYS]);
      for (const result of results) {
        expect(result.microsPerLine).toHaveLength(1);
        expect(Number.isFinite(result.medianMicrosPerLine)).toBe(true);
        expect(result.medianMicrosPerLine).toBeGreaterThan(0);
        // `none` writes nothing; the others every line, the same bytes.
        if (result.way === 'none') expect(result.bytesPerLine).toBe(0);
        else expect(result.bytesPerLine).toBeGreaterThan(100);
      }
      const writers = results.filter((result) => result.way !== 'none');
      expect(new Set(writers.map((result) => result.bytesPerLine)).size).toBe(1);
      expect(formatRequestLog(results, 2_000, reader)).toContain(`its reader ${reader}`);
    }
  });
});
