// The metrics as an operator sees them: a real Prometheus (Debian's `prometheus`) scrapes the
// gateway's metrics listener every second, and its HTTP API must answer exact counts after known requests.
// Without prometheus those tests are skipped outside CI (test/needs.ts); the configuration's are not.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathOf, describeNeeding } from '../needs.js';
import { freePort } from '../ports.js';
import { loadConfig } from '../../src/config.js';
import { KEY_1, type Stack, postGraphQL, startStack } from '../fixture.js';
import { openSubscription } from '../live/sse.js';

let stack: Stack;
let prometheus: ChildProcess;
let prometheusUrl: string;
let dir: string;

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(expression: string): Promise<Sample[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`);
  const body = (await response.json()) as { status: string; data: { result: Sample[] } };
  expect(body.status).toBe('success');
  return body.data.result;
}

/** The value of a one-sample expression once Prometheus has scraped it (null: none seen in 15 s). */
async function settled(expression: string, expected: number): Promise<number | null> {
  let last: number | null = null;
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    const [sample] = await query(expression);
    last = sample === undefined ? null : Number(sample.value[1]);
    if (last === expected) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

const gql = (query: string, key: string | null = KEY_1) =>
  postGraphQL<unknown>(stack.endpoint, { query }, key === null ? {} : { authorization: `Bearer ${key}` });

describeNeeding('prometheus')('metrics scraped by Prometheus', () => {
  beforeAll(async () => {
    stack = await startStack({
      env: { METRICS_PORT: '0', CACHE: 'on', METRICS_MAX_OPERATIONS: '2', MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0' },
    });
    const metricsUrl = stack.gateway.metricsUrl;
    if (metricsUrl === null) throw new Error('METRICS_PORT=0 must start the metrics listener');
    dir = mkdtempSync(join(tmpdir(), 'gateway-prometheus-'));
    const config = [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: gateway',
      '    static_configs:',
      `      - targets: ['${new URL(metricsUrl).host}']`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'prometheus.yml'), config);
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      pathOf('prometheus'),
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    for (const until = Date.now() + 20_000; ; ) {
      const ready = await fetch(`${prometheusUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > until) throw new Error('prometheus did not start');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts requests by operation (bounded: other, anonymous), errors by code, upstream calls by route template, cache reads', async () => {
    for (let i = 0; i < 3; i++) await gql('query Dashboard { website(id: "1") { id domain } }');
    await gql('query Second { websites { totalCount } }');
    await gql('query Third { websites { totalCount } }'); // past METRICS_MAX_OPERATIONS=2
    await gql('query Fourth { websites { totalCount } }');
    await gql('{ website(id: "2") { id } }');
    await gql('{ nope }');
    const upstreamToWebsite1 = stack.sandbox.log.entries.filter((e) => e.path === '/api/v1/websites/1').length;
    const upstreamToWebsite2 = stack.sandbox.log.entries.filter((e) => e.path === '/api/v1/websites/2').length;

    const count = (labels: string) => `sum(gateway_graphql_request_duration_seconds_count{${labels}})`;
    expect(await settled(count('operation="Dashboard",type="query",outcome="ok"'), 3)).toBe(3);
    expect(await settled(count('operation="Second",type="query",outcome="ok"'), 1)).toBe(1);
    expect(await settled(count('operation="other",type="query",outcome="ok"'), 2)).toBe(2);
    expect(await settled(count('operation="anonymous",type="query",outcome="ok"'), 1)).toBe(1);
    expect(await settled(count('operation="anonymous",type="unknown",outcome="error"'), 1)).toBe(1);
    expect(await settled(count(''), 8)).toBe(8);
    expect(await settled('sum(gateway_graphql_errors_total{code="GRAPHQL_VALIDATION_FAILED"})', 1)).toBe(1);

    const route = (labels: string) => `sum(gateway_upstream_request_duration_seconds_count{${labels}})`;
    expect(upstreamToWebsite1 + upstreamToWebsite2).toBeGreaterThan(0);
    const byId = upstreamToWebsite1 + upstreamToWebsite2;
    expect(await settled(route('method="GET",route="/api/v1/websites/{id}",status="200"'), byId)).toBe(byId);
    const all = stack.sandbox.log.entries.filter((e) => e.path.startsWith('/api/v1/')).length;
    expect(await settled(route(''), all)).toBe(all);

    // Dashboard: a miss, then sent twice as a stored answer (cache/stored-answers.ts), no read; the three
    // list reads: a miss then two hits (three documents); website 2: a miss.
    expect(await settled('sum(gateway_cache_reads_total{result="miss"})', 3)).toBe(3);
    expect(await settled('sum(gateway_cache_reads_total{result="hit"})', 2)).toBe(2);
    expect(await settled('sum(gateway_stored_answers_total{result="sent"})', 2)).toBe(2);
    // Stored: the first answer of each of the five queries that succeeded.
    expect(await settled('sum(gateway_stored_answers_total{result="stored"})', 5)).toBe(5);

    expect(await settled('gateway_upstream_breaker_open', 0)).toBe(0);
    expect(await settled('gateway_requests_active', 0)).toBe(0);
    expect(await settled('gateway_requests_queued', 0)).toBe(0);
    expect((await query('process_cpu_seconds_total')).length).toBe(1);
    expect((await query('nodejs_eventloop_lag_seconds')).length).toBe(1);
  }, 60_000);

  it('no label holds a key, an id, a date or a raw URL', async () => {
    const response = await fetch(`${prometheusUrl}/api/v1/series?match[]=${encodeURIComponent('{__name__=~"gateway_.+"}')}`);
    const { data } = (await response.json()) as { data: Record<string, string>[] };
    expect(data.length).toBeGreaterThan(10);
    for (const series of data) {
      for (const [name, value] of Object.entries(series)) {
        if (name === 'le' || name === 'status' || name === 'instance') continue;
        expect(value).not.toMatch(/sandbox-key|\d{4}-\d{2}-\d{2}|\?|\/\d+/);
      }
    }
  });

  it('counts refusals by reason, and never serves the metrics on the public port', async () => {
    stack.sandbox.setKnobs({ latencyMs: 400 });
    const answers = await Promise.all([1, 2, 3].map((n) => gql(`{ website(id: "${n + 3}") { id } }`)));
    stack.sandbox.setKnobs({ latencyMs: 0 });
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503, 503]);
    expect(await settled('sum(gateway_requests_refused_total{reason="queue_full"})', 2)).toBe(2);
    const onPublicPort = await fetch(`${stack.gateway.url}/metrics`);
    expect(await onPublicPort.text()).not.toContain('gateway_requests_active');
  }, 30_000);

  it('shows the open subscriptions and the topics they watch', async () => {
    const watch = (id: string) =>
      openSubscription(stack.endpoint, { query: `subscription { website(id: "${id}") { id } }` }, KEY_1).then(async (stream) => {
        await stream.next();
        return stream;
      });
    const streams = [await watch('1'), await watch('1'), await watch('2')];
    expect(await settled('gateway_live_streams', 3)).toBe(3);
    expect(await settled('gateway_live_topics', 2)).toBe(2);
    for (const stream of streams) stream.close();
    expect(await settled('gateway_live_streams', 0)).toBe(0);
    expect(await settled('gateway_live_topics', 0)).toBe(0);
  }, 60_000);

  it('shows the breaker open while the upstream fails', async () => {
    stack.sandbox.scriptFaults(Array.from({ length: 30 }, () => ({ kind: 'status' as const, status: 503 })));
    for (let i = 0; i < 8; i++) await gql(`{ website(id: "${i + 10}") { id } }`);
    expect(await settled('gateway_upstream_breaker_open', 1)).toBe(1);
    // The failed attempts are there with their status; the breaker's fail-fast answers make no attempt.
    expect(await settled('sum(gateway_upstream_request_duration_seconds_count{status="503"}) > bool 0', 1)).toBe(1);
  }, 30_000);
});

describe('metrics configuration', () => {
  it('is off without METRICS_PORT, on 127.0.0.1 by default, and reports bad values together', () => {
    expect(loadConfig({}).metrics).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1', maxOperations: 200 });
    expect(() => loadConfig({ METRICS_PORT: 'x', METRICS_MAX_OPERATIONS: '-1' })).toThrow(
      /METRICS_PORT must be an integer[\s\S]*METRICS_MAX_OPERATIONS must be an integer/,
    );
  });
});
