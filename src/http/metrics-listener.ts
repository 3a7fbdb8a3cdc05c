// Prometheus: the registry of the upstream side's and admission's figures (the GraphQL ones are
// answer-metrics.ts's), served on a listener of its own, never the public port: the figures name
// operations and error rates, which are for operators, not for the internet.
import { createServer } from 'node:http';
import { closeNow, listenOn } from './listen.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { optionalInteger, text } from '../settings.js';
import { VERSION } from '../version.js';
import { ClusterFigures } from './cluster-metrics.js';

// In a worker: a listener of its own would share the port, and a scrape would see one worker at random.
export { answerPrimary as reportToPrimary } from './cluster-metrics.js';

export interface MetricsListenerConfig {
  port: number;
  host: string;
}

export const METRICS_LISTENER_SETTINGS = {
  port: optionalInteger('METRICS_PORT', {
    min: 0,
    max: 65535,
    unit: 'port',
    doc: 'port of the Prometheus listener (GET /metrics), apart from the public port; 0: any free port',
  }),
  host: text('METRICS_HOST', { fallback: '127.0.0.1', unit: 'address', doc: 'address of the metrics listener' }),
};

/** Seconds, from a cached answer to a request that spends the whole default deadline on retries. */
export const DURATION_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

export type RefusalReason = 'queue_full' | 'queue_timeout';

/** What the layers under the composition root report; gateway.ts passes these as their callbacks. */
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

export function createGatewayMetrics() {
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
  const readAtScrape = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  };
  let load = (): { active: number; queued: number } => ({ active: 0, queued: 0 });
  readAtScrape('gateway_requests_active', 'HTTP requests being worked on (MAX_ACTIVE_REQUESTS at most)', () => load().active);
  readAtScrape('gateway_requests_queued', 'HTTP requests waiting in line for a slot (MAX_QUEUED_REQUESTS at most)', () => load().queued);
  let live = (): { streams: number; topics: number } => ({ streams: 0, topics: 0 });
  readAtScrape('gateway_live_streams', 'Subscriptions open now (their event streams; LIVE_MAX_STREAMS at most)', () => live().streams);
  readAtScrape(
    'gateway_live_topics',
    'Topics (key, document, variables) the open subscriptions watch: one poller each, polling here or (with Redis) following another gateway',
    () => live().topics,
  );
  return {
    registry,
    /** `route` is a template (never an id); `error`: no answer. */
    upstreamAttempt: (method: string, route: string, status: number | 'error', seconds: number): void =>
      upstream.observe({ method, route, status: String(status) }, seconds),
    cacheRead: (result: 'hit' | 'miss' | 'stale'): void => cacheReads.inc({ result }),
    storedAnswer: (result: 'sent' | 'stored'): void => storedAnswers.inc({ result }),
    breakerOpen: (open: boolean): void => breaker.set(open ? 1 : 0),
    refused: (reason: RefusalReason): void => refusedTotal.inc({ reason }),
    /** `read` is read at each scrape. */
    observeAdmission: (read: () => { active: number; queued: number }): void => {
      load = read;
    },
    observeLive: (read: () => { streams: number; topics: number }): void => {
      live = read;
    },
  };
}

/** In the primary: each scrape answers the sum over all workers (cluster-metrics.ts). */
export function serveClusterMetrics(config: MetricsListenerConfig) {
  const figures = new ClusterFigures();
  return serveMetrics({ read: () => figures.read(), contentType: figures.contentType }, config);
}

/** Serves `GET /metrics` (Prometheus text format) and nothing else. */
export async function serveMetrics(source: Registry | { read(): Promise<string>; contentType: string }, config: MetricsListenerConfig) {
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
    /** The text is at `${url}/metrics`. */
    url,
    close: () => closeNow(server),
  };
}
