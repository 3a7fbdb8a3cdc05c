// Prometheus: one registry per gateway with the figures the upstream side and admission control
// report (the GraphQL ones are answer-metrics.ts's), and the listener that serves it.
// The listener is its own (METRICS_PORT, METRICS_HOST), never the public port: the figures name
// operations and error rates, which are for operators, not for the internet.
import { createServer } from 'node:http';
import { listenOn } from './listen.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { optionalInteger, text } from '../settings.js';
import { VERSION } from '../version.js';
import { ClusterFigures, answerPrimary } from './cluster-metrics.js';

/** Where the metrics listener listens (config.ts reads METRICS_PORT and METRICS_HOST). */
export interface MetricsListenerConfig {
  port: number;
  host: string;
}

/** Where the Prometheus listener listens; none without METRICS_PORT. */
export const METRICS_LISTENER_SETTINGS = {
  port: optionalInteger('METRICS_PORT', {
    min: 0,
    max: 65535,
    unit: 'port',
    doc: 'port of the Prometheus listener (GET /metrics), apart from the public port; 0: any free port',
  }),
  host: text('METRICS_HOST', { fallback: '127.0.0.1', unit: 'address', doc: 'address of the metrics listener' }),
};

/**
 * Seconds, from a cached answer (about a millisecond) to a request that spends the whole default
 * deadline on retries (tens of seconds).
 */
export const DURATION_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

export type RefusalReason = 'queue_full' | 'queue_timeout';

/** What the layers under the composition root report; gateway.ts passes these as their callbacks. */
export interface GatewayMetrics {
  registry: Registry;
  /** One upstream attempt: its method, route template (never an id), and status or `error` (no answer). */
  upstreamAttempt(method: string, route: string, status: number | 'error', seconds: number): void;
  cacheRead(result: 'hit' | 'miss' | 'stale'): void;
  /** A stored answer sent before GraphQL ran, or an answer stored (cache/stored-answers.ts). */
  storedAnswer(result: 'sent' | 'stored'): void;
  breakerOpen(open: boolean): void;
  refused(reason: RefusalReason): void;
  /** Read at each scrape: the requests being worked on and waiting in line. */
  observeAdmission(load: () => { active: number; queued: number }): void;
  /** Read at each scrape: the subscriptions' open streams and the topics polled for them. */
  observeLive(live: () => { streams: number; topics: number }): void;
}

export function createGatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Which build runs: always 1, its labels say what (with WORKERS, one worker's, not a sum).
  new Gauge({
    name: 'gateway_build_info',
    help: 'Always 1: the version of the gateway and of Node.js this process runs',
    labelNames: ['version', 'nodejs'] as const,
    aggregator: 'first',
    registers: [registry],
  }).set({ version: VERSION, nodejs: process.versions.node }, 1);
  const upstream = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Upstream HTTP attempts (retries included), by method, route template and status (`error`: no answer)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS_S,
    registers: [registry],
  });
  const cacheReads = new Counter({
    name: 'gateway_cache_reads_total',
    help: 'Reads of the upstream cache: hit (fresh, or joined a call in flight), miss, stale (answered stale during an outage)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const storedAnswers = new Counter({
    name: 'gateway_stored_answers_total',
    help: "Stored answers: sent (a repeated query answered before GraphQL ran), stored (a query's answer kept for its repeats)",
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const breaker = new Gauge({
    name: 'gateway_upstream_breaker_open',
    help: '1 while the circuit breaker in front of the upstream is open (calls fail fast), else 0',
    registers: [registry],
  });
  breaker.set(0);
  const refusedTotal = new Counter({
    name: 'gateway_requests_refused_total',
    help: 'HTTP requests turned away by admission control: queue_full (line full), queue_timeout (waited too long)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  let load = (): { active: number; queued: number } => ({ active: 0, queued: 0 });
  new Gauge({
    name: 'gateway_requests_active',
    help: 'HTTP requests being worked on (MAX_ACTIVE_REQUESTS at most)',
    registers: [registry],
    collect() {
      this.set(load().active);
    },
  });
  new Gauge({
    name: 'gateway_requests_queued',
    help: 'HTTP requests waiting in line for a slot (MAX_QUEUED_REQUESTS at most)',
    registers: [registry],
    collect() {
      this.set(load().queued);
    },
  });
  let live = (): { streams: number; topics: number } => ({ streams: 0, topics: 0 });
  new Gauge({
    name: 'gateway_live_streams',
    help: 'Subscriptions open now (their event streams; LIVE_MAX_STREAMS at most)',
    registers: [registry],
    collect() {
      this.set(live().streams);
    },
  });
  new Gauge({
    name: 'gateway_live_topics',
    help: 'Topics (key, document, variables) the open subscriptions watch: one poller each, polling here or (with Redis) following another gateway',
    registers: [registry],
    collect() {
      this.set(live().topics);
    },
  });
  return {
    registry,
    upstreamAttempt: (method, route, status, seconds) => upstream.observe({ method, route, status: String(status) }, seconds),
    cacheRead: (result) => cacheReads.inc({ result }),
    storedAnswer: (result) => storedAnswers.inc({ result }),
    breakerOpen: (open) => breaker.set(open ? 1 : 0),
    refused: (reason) => refusedTotal.inc({ reason }),
    observeAdmission: (read) => {
      load = read;
    },
    observeLive: (read) => {
      live = read;
    },
  };
}

export interface MetricsListener {
  /** e.g. http://127.0.0.1:9464; the text is at `${url}/metrics`. */
  url: string;
  close(): Promise<void>;
}

/**
 * In a worker (WORKERS > 1): this registry answers the primary's scrapes (http/cluster-metrics.ts)
 * instead of a listener of its own, since workers listening on one port share it and a scrape would
 * see one worker at random.
 */
export function reportToPrimary(registry: Registry): void {
  answerPrimary(registry);
}

/**
 * In the primary: METRICS_PORT answers the sum over all workers (asked over IPC) on every scrape, a
 * dead worker's counts kept and each worker waited for at most WORKER_METRICS_TIMEOUT_MS.
 */
export function serveClusterMetrics(config: MetricsListenerConfig): Promise<MetricsListener> {
  const figures = new ClusterFigures();
  return serveMetrics({ read: () => figures.read(), contentType: figures.contentType }, config);
}

/** Serves `GET /metrics` (Prometheus text format) and nothing else. */
export async function serveMetrics(
  source: Registry | { read(): Promise<string>; contentType: string },
  config: MetricsListenerConfig,
): Promise<MetricsListener> {
  const read = 'read' in source ? source.read : () => source.metrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the metrics are at GET /metrics\n');
      return;
    }
    read().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n'),
    );
  });
  const url = await listenOn(server, config.host, config.port);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
