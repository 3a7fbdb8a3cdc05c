// A short run of the floor pass, so that it never rots: the gateway, a previous build and the minimal
// floor gateway (bench/floor-gateway.ts) on the same stack, alternately. It spawns dist/sandbox/main.js
// and dist/main.js: `npm test` builds them first.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { floorPass, formatReport, runBench } from '../../bench/index.js';
import { RUN, expectCalls, expectEveryProcessEnded, twoRounds } from './short.js';

describe('benchmark harness: the floor pass', () => {
  expectEveryProcessEnded();

  it('runs the floor pass short: the gateway, a previous build and the minimal floor gateway alternately, with their ratios', async () => {
    // Off by default; named, it runs at 0 ms and 20 connections, at least 3 runs each; no previous build unless given.
    expect(floorPass([])).toEqual({ floor: null });
    expect(floorPass(['floor'], { repeat: 1 })).toStrictEqual({ floor: { latencyMs: 0, connections: 20, rounds: 3 } });
    expect(floorPass(['floor'], { repeat: 5 }).floor?.rounds).toBe(5);
    expect(floorPass(['floor'], { previousScript: 'dist/main.js' }).floor?.previousScript).toBe('dist/main.js');

    // The "previous build" is this build itself (dist/main.js): same data, same calls, ratios near 1. It
    // runs under another node binary (--previous-node): here a wrapper of this one that logs its arguments.
    const wrapperDir = mkdtempSync(join(tmpdir(), 'previous-node-'));
    const wrapper = join(wrapperDir, 'node');
    writeFileSync(wrapper, `#!/bin/sh\necho "$@" >> "${wrapperDir}/calls"\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
    const report = await runBench({
      ...RUN,
      repeat: 1,
      passes: [],
      // Two rounds: the runs alternate and their medians are taken all the same.
      floor: twoRounds(floorPass(['floor'], { previousScript: 'dist/main.js' }).floor),
      previousNode: wrapper,
    });
    const calls = readFileSync(join(wrapperDir, 'calls'), 'utf8');
    rmSync(wrapperDir, { recursive: true, force: true });
    expect(calls).toContain('--version');
    expect(calls).toMatch(/dist\/main\.js/);
    expect(report.previousNode).toBe(process.version);
    expect(formatReport(report)).toContain(`The previous build runs on Node ${process.version}; the gateway on ${process.version}.`);

    const floor = report.floor;
    expect(floor?.notes).toEqual([]);
    expect(floor?.sameData).toBe(true);
    expect(floor?.checkCalls).toEqual({ gateway: 7, floor: 7 });
    expect(floor?.runs.gateway).toHaveLength(2);
    expect(floor?.runs.floor).toHaveLength(2);
    const previous = floor?.previous;
    expect(previous?.sameData).toBe(true);
    expect(previous?.checkCalls).toBe(7);
    expect(previous?.runs).toHaveLength(2);
    expectCalls(floor?.gateway, 7);
    expectCalls(previous?.measurement, 7);
    // The floor's answers do not count their calls: at least the reads reach the sandbox.
    expect(floor?.floor.reportedCallsPerRequest).toBeNull();
    expect(floor?.floor.upstreamCallsPerRequest).toBeGreaterThanOrEqual(7);
    for (const m of [floor?.gateway, floor?.floor, previous?.measurement]) {
      expect(m?.errors).toBe(0);
      for (const figure of [m?.requestsPerSecond, m?.cpuMsPerRequest]) {
        expect(Number.isFinite(figure)).toBe(true);
        expect(figure).toBeGreaterThan(0);
      }
    }
    const ratios = [
      previous?.requestsPerSecondRatio,
      previous?.cpuRatio,
      previous?.gatewayRequestsPerSecondRatio,
      previous?.gatewayCpuRatio,
    ];
    for (const ratio of [floor?.requestsPerSecondRatio, floor?.cpuRatio, ...ratios]) {
      expect(Number.isFinite(ratio)).toBe(true);
      expect(ratio).toBeGreaterThan(0);
    }
    // In the JSON report too.
    const json = JSON.parse(JSON.stringify(report)) as typeof report;
    expect(json.floor?.previousScript).toBe('dist/main.js');
    expect(json.floor?.previous?.gatewayRequestsPerSecondRatio).toBe(previous?.gatewayRequestsPerSecondRatio);
    expect(json.floor?.previous?.runs).toHaveLength(2);

    const markdown = formatReport(report);
    expect(markdown).toContain(
      '## Pass "floor": the gateway against a minimal gateway on the same stack, 0 ms sandbox latency, 20 connections',
    );
    expect(markdown).toMatch(/\| gateway \(CACHE=off\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \|/);
    expect(markdown).toMatch(/\| floor \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \|/);
    // The previous build: the third row, its ratios to the floor, and this build against it.
    expect(markdown).toMatch(
      /\| floor \|.*\n\| previous \(dist\/main\.js\) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+\.\d\d \| [\d.]+ \| [\d.]+ \| \d+, \d+ \| [\d.]+, [\d.]+ \|\n/,
    );
    expect(markdown).toContain(
      'All three answered the same data. One dashboard made 7 upstream calls through the gateway, 7 through the previous build, 7 through the floor.',
    );
    expect(markdown).toMatch(/\nPrevious ÷ floor: req\/s \d+\.\d\d; CPU ms\/req \d+\.\d\d\.\n/);
    expect(markdown).toMatch(
      /\nGateway ÷ previous \(this build against the previous one, same run\): req\/s \d+\.\d\d; CPU ms\/req \d+\.\d\d\.\n/,
    );
    // The ratios and their targets, printed whether met or not.
    expect(markdown).toMatch(
      /Gateway ÷ floor: req\/s \d+\.\d\d \(target ≥ 0\.85: (met|not met)\); CPU ms\/req \d+\.\d\d \(target ≤ 1: (met|not met)\)\./,
    );
    expect(markdown).toMatch(/\| gateway req\/s ÷ floor req\/s ≥ 0\.85 .* \| \d+\.\d\d \(\d+ ÷ \d+\) \| [✓✗] \|/);
    expect(markdown).toMatch(/\| gateway CPU ms\/req ÷ floor CPU ms\/req ≤ 1 .* \| \d+\.\d\d \([\d.]+ ÷ [\d.]+\) \| [✓✗] \|/);
    // A run of the floor pass alone judges only its targets, and those stay about gateway ÷ floor.
    expect(markdown).not.toContain('dashboard p50 within upstream latency');
    expect(markdown.slice(markdown.indexOf('## Targets'))).not.toMatch(/previous/i);

    // Without a previous build, the section has no trace of one.
    const { previous: _previous, previousScript: _script, ...withoutPrevious } = floor ?? ({} as NonNullable<typeof floor>);
    const { previousNode: _node, ...withoutPreviousNode } = report;
    const plain = formatReport({ ...withoutPreviousNode, floor: withoutPrevious });
    expect(plain).not.toMatch(/previous/i);
    expect(plain).toContain('Both answered the same data. One dashboard made 7 upstream calls through the gateway, 7 through the floor.');
    expect(plain).toMatch(/\| floor \|.*\|\n\nGateway ÷ floor: /);
  }, 60_000);
});
