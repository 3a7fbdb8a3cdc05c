// A tiny run of the benchmark harness (one scenario, about a second per client), so it never rots.
// It spawns dist/sandbox/main.js and dist/main.js: `npm test` builds them first.
import { describe, expect, it } from 'vitest';
import { formatReport, runBench } from '../../src/bench/index.js';

describe('benchmark harness', () => {
  it('measures the dashboard through the gateway and both REST baselines, and prints its table', async () => {
    const report = await runBench({
      durationSeconds: 1,
      warmupSeconds: 0.3,
      repeat: 1,
      passes: [{ name: 'tiny', latencyMs: 5, connections: 2, scenarios: ['dashboard'] }],
    });

    expect(report.passes).toHaveLength(1);
    const result = report.passes[0]?.results[0];
    expect(result?.scenario).toBe('dashboard');
    expect(result?.notes).toEqual([]);
    expect(result?.sameCalls).toBe(true);
    const gateway = result?.gateway;
    expect(gateway?.upstreamCallsPerRequest).toBe(7);
    expect(gateway?.errors).toBe(0);
    for (const row of [gateway, result?.sequential, result?.parallel]) {
      for (const figure of [row?.requestsPerSecond, row?.p50, row?.p90, row?.p99, row?.upstreamCallsPerRequest]) {
        expect(Number.isFinite(figure)).toBe(true);
        expect(figure).toBeGreaterThan(0);
      }
    }
    for (const figure of [gateway?.cpuMsPerRequest, gateway?.peakRssMb, report.passes[0]?.gatewayPeakRssMb]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }

    const markdown = formatReport(report);
    expect(markdown).toContain('### 2. Dashboard: one website with six statistics');
    expect(markdown).toMatch(/\| gateway \(GraphQL\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 7\.00 \| [\d.]+ \| [\d.]+ \| [\d.]+× \| [\d.]+× \|/);
    expect(markdown).toContain('| REST, sequential |');
    expect(markdown).toContain('| REST, parallel |');
    expect(markdown).toContain('## Targets');
  }, 30_000);
});
