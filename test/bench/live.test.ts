// A short run of the live pass (20 subscribers, LIVE_INTERVAL_S=0.1, two changes, 0.2-second dashboard runs), so
// that it never rots. It spawns dist/sandbox/main.js and dist/main.js: `npm test` builds them first.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVE, formatReport, livePass, runBench } from '../../bench/index.js';
import { expectEveryProcessEnded } from './short.js';

describe('benchmark harness: the live pass', () => {
  expectEveryProcessEnded();

  it('shares one poller among the streams, times a change at each, reads the memory per stream and the dashboard beside them', async () => {
    // Only when named; the run's latency and connections, and its own figures.
    expect(livePass([])).toEqual({ live: null });
    expect(livePass(['live'])).toStrictEqual({ live: { latencyMs: 20, connections: 10, ...DEFAULT_LIVE } });
    expect(DEFAULT_LIVE.subscribers).toBe(1000);

    const report = await runBench({
      durationSeconds: 0.2,
      warmupSeconds: 0.1,
      quietMs: 50,
      repeat: 1,
      passes: [],
      ...livePass(['live'], { latencyMs: 5, connections: 2, subscribers: 20, intervalSeconds: 0.1, countIntervals: 3, changes: 2 }),
    });

    const live = report.live;
    expect(live?.notes).toEqual([]);
    // Website 1 and four statistics of today: 5 reads as a query, and 5 in every poll, the same ones.
    expect(live?.queryCalls).toEqual([5, 5, 5]);
    // How many polls the counting window held depends on the machine's speed: at least one, each the query's calls.
    expect(live?.polls.calls.length).toBeGreaterThanOrEqual(1);
    for (const calls of live?.polls.calls ?? []) expect(calls).toBe(5);
    expect(live?.polls.sameCalls).toBe(true);
    expect(live?.polls.gapsMs).toHaveLength((live?.polls.calls.length ?? 0) - 1);
    for (const gap of live?.polls.gapsMs ?? []) expect(gap).toBeGreaterThan(0);
    expect(live?.gatewayEnv.LIVE_INTERVAL_S).toBe('0.1');
    expect(Number.isFinite(live?.idleCpuMsPerSecond.none)).toBe(true);
    expect(Number.isFinite(live?.idleCpuMsPerSecond.open)).toBe(true);

    // Every change reached every stream, after the poll that read it.
    expect(live?.perChange).toHaveLength(2);
    for (const change of live?.perChange ?? []) {
      expect(change.received).toBe(20);
      expect(change.missing).toBe(0);
      // Found in the sandbox's log. Its sign is not judged: the clocks are matched to within a call's one-way trip.
      expect(Number.isFinite(change.waitMs)).toBe(true);
      // The poll that read the change came before every event showing it.
      expect(change.afterPoll?.p50).toBeGreaterThan(0);
      expect(change.afterPoll?.max).toBeGreaterThan(0);
    }
    expect(live?.delays.count).toBe(40);
    expect(live?.delays.missing).toBe(0);
    expect(live?.afterPoll.count).toBe(40);
    for (const figure of [
      live?.delays.p50,
      live?.delays.p99,
      live?.delays.max,
      live?.afterPoll.p50,
      live?.worstCaseMs,
      live?.rttMs,
      live?.boundMs,
    ]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }

    // The memory with and without the streams, each after a forced GC through the inspector.
    expect(live?.memory.none.gc).toBe(true);
    expect(live?.memory.open.gc).toBe(true);
    for (const figure of [live?.memory.rssKbPerStream, live?.memory.heapKbPerStream, live?.memory.open.heapUsedMb]) {
      expect(Number.isFinite(figure)).toBe(true);
    }

    // The dashboard with the streams open (idle, and changing) and with none; the poller gone with the last stream.
    expect(live?.runs.map((run) => run.streams)).toEqual(['open', 'open+changes', 'none']);
    for (const run of live?.runs ?? []) {
      expect(run.errors).toBe(0);
      expect(run.p50).toBeGreaterThan(0);
    }
    expect(Number.isFinite(live?.p50.ratio)).toBe(true);
    expect(live?.callsAfterClose).toBe(0);

    const markdown = formatReport(report);
    expect(markdown).toContain('## Pass "live": 20 subscribers of one live dashboard, LIVE_INTERVAL_S=0.1, 5 ms sandbox latency');
    expect(markdown).toMatch(/\| upstream calls per poll, every stream open, nothing changing \| 5(, 5)+ in the \d+ polls .* \| ✓ \|/);
    expect(markdown).toMatch(
      /\| 1 \| 20 \| 0 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| -?[\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| -?\d+ \| \d+ \|\n/,
    );
    expect(markdown).toMatch(
      /\| memory per open stream \(\(20 open − none\) ÷ 20\) \| RSS -?[\d.]+ KB, heap used -?[\d.]+ KB .* \| – \| – \|/,
    );
    expect(markdown).toMatch(/\| live: upstream calls of each poll = those of one execution of the document as a query .* \| ✓ \|/);
    expect(markdown).toMatch(/\| live: a change reaches every subscriber within interval \+ upstream round trip \+ 100 ms .* \| [✓✗] \|/);
    expect(markdown).toMatch(/\| live: dashboard p50 with 20 streams open within 10 % of it with none .* \| [✓✗] \|/);
    expect(markdown).toMatch(/\| live: the same at the worst phase, estimated: .* \| [\d.]+ ms vs [\d.]+ ms .* \| [✓✗] \|/);
    // A run of the live pass alone judges only its targets.
    expect(markdown).not.toContain('dashboard p50 within upstream latency');
  }, 60_000);
});
