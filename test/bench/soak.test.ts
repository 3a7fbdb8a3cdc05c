import { describe, expect, it } from 'vitest';
import { soak } from '../../src/bench/soak.js';

describe('load with faults', () => {
  it('20,000 requests at 50 at once, 10% upstream faults, two keys: healthy, well-formed, no leak, memory back', async () => {
    const report = await soak({ requests: 20_000, concurrency: 50, faultRate: 0.1, latencyMs: 2, jitterMs: 3 });
    console.log(
      `load: ${report.requests} requests in ${report.durationMs} ms; ${report.withData} with data, ${report.withErrors} with errors; ` +
        `heap ${report.heapStartMb} -> ${report.heapEndMb} MB`,
    );
    expect(report.requests).toBe(20_000);
    expect(report.malformed).toEqual([]);
    expect(report.leaks).toEqual([]);
    expect(report.unhandledRejections).toBe(0);
    // Half the requests ask for the other key's websites (NOT_FOUND); faults add errors on top.
    expect(report.withData).toBeGreaterThan(5_000);
    expect(report.withErrors).toBeGreaterThan(5_000);
    expect(report.heapEndMb - report.heapStartMb).toBeLessThan(30);
  }, 180_000);
});
