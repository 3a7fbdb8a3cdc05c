// A short run of the scale pass (bench/scale.ts), so that it never rots: gateways sharing one Redis,
// then a Redis Cluster, with many keys. It spawns dist/sandbox/main.js, dist/main.js, redis-server and
// redis-cli: `npm test` builds the first two.
import { describe, expect } from 'vitest';
import { formatReport, runBench, scalePass } from '../../bench/index.js';
import { itNeeding } from '../needs.js';
import { RUN, expectEveryProcessEnded } from './short.js';

describe('benchmark harness: the scale pass', () => {
  expectEveryProcessEnded();

  // Skipped without redis-server and redis-cli outside CI (test/needs.ts).
  itNeeding('redis-server', 'redis-cli')(
    'runs the scale pass short: gateways on one Redis and on a cluster, many keys, the keys spread over the masters',
    async () => {
      expect(scalePass([])).toEqual({ scale: null });
      const defaults = scalePass(['scale']).scale;
      expect(defaults).toStrictEqual({
        gateways: [2, 4],
        keys: 1_000,
        connections: 32,
        latencyMs: 20,
        redisServer: 'redis-server',
        redisCli: 'redis-cli',
      });
      const report = await runBench({
        ...RUN,
        repeat: 1,
        baselines: false,
        passes: [],
        scale: scalePass(['scale'], { gateways: [2], keys: 24, connections: 6, latencyMs: 0 }).scale,
      });
      const scale = report.scale;
      expect(scale?.notes).toEqual([]);
      expect(scale?.rows.map((row) => [row.store, row.gateways])).toEqual([
        ['redis', 2],
        ['cluster', 2],
      ]);
      for (const row of scale?.rows ?? []) {
        const { first, repeat } = row;
        // Each key's first dashboard: a website and six statistics read upstream and written to the store.
        // How many calls that takes is the pass's figure (fewer when another of the user's keys stored an
        // entry first, more when a read is tried again), not checked here.
        expect(first.dashboards).toBe(24);
        expect(first.errors).toBe(0);
        expect(first.upstreamCalls).toBeGreaterThan(0);
        expect(first.commands.evalsha).toBeGreaterThan(0);
        // Then the stored answers, read with MGET. How many MGETs a dashboard costs, and how many reads still
        // go upstream (a key whose writes had not landed when the repeat began, on a busy machine), are the
        // figures the pass measures, not checked here.
        expect(repeat.errors).toBe(0);
        expect(repeat.dashboards).toBeGreaterThan(0);
        expect(repeat.upstreamCalls).toBeGreaterThanOrEqual(0);
        expect(repeat.redisBytesOut).toBeGreaterThan(0);
        for (const figure of [first.p50, repeat.p50, repeat.p99, repeat.cpuMs, repeat.requestsPerSecond, repeat.commands.mget]) {
          expect(Number.isFinite(figure)).toBe(true);
          expect(figure).toBeGreaterThan(0);
        }
        expect(first.masterShares.reduce((sum, share) => sum + share, 0)).toBeCloseTo(1, 6);
      }
      // On the cluster, 24 keys' hash tags fall on every one of the three masters.
      const cluster = scale?.rows.find((row) => row.store === 'cluster');
      expect(cluster?.first.masterShares).toHaveLength(3);
      for (const share of cluster?.first.masterShares ?? []) expect(share).toBeGreaterThan(0);

      const markdown = formatReport(report);
      expect(markdown).toContain('## Pass "scale": gateways sharing one Redis, then a Redis Cluster, 24 keys, 0 ms sandbox');
      expect(markdown).toMatch(/\| one Redis \| 2 \| first \| 24 \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \|/);
      expect(markdown).toMatch(
        /\| cluster \(3 \+ 3\) \| 2 \| repeat \| \d+ \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| \d+\.\d\d \|/,
      );
      expect(markdown).toMatch(/- cluster \(3 \+ 3\), 2 gateways, repeat: .*\bmget \d+\.\d\d/);
      expect(markdown).toMatch(/Cluster ÷ one Redis: 2 gateways: CPU ms per repeated dashboard \d+\.\d\d, p50 \d+\.\d\d, p99 \d+\.\d\d\./);
    },
    60_000,
  );
});
