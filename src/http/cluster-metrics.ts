// WORKERS > 1: the primary answers each scrape with the sum over the workers, asked over IPC. Counters
// stay counters (Prometheus reads a fall as a reset, and would count everything again):
// - a worker that dies leaves the counts the primary last saw of it (its counters and histograms; its
//   gauges describe a live process and go with it): a summed counter never falls for a death, though
//   what the worker counted after the last scrape is lost with it;
// - each worker is waited for at most `timeoutMs` (a second: well under Prometheus's 10 s scrape
//   timeout); one that does not answer (frozen, busy) costs its own series, not the scrape: its counts
//   are those last seen, its gauges missing, and `gateway_metrics_workers_silent` says how many.
// prom-client's AggregatorRegistry.clusterMetrics has one timeout for the whole scrape (5 s, then the
// scrape fails) and forgets a dead worker at once; its `aggregate` (the sums) is used as it is.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, type Registry } from 'prom-client';

type Figures = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

const ASK = 'gateway:metrics?';
const ANSWER = 'gateway:metrics';

/** How long a scrape waits for each worker's figures. */
export const WORKER_METRICS_TIMEOUT_MS = 1_000;

interface Asked {
  type: typeof ASK;
  id: number;
}
interface Answered {
  type: typeof ANSWER;
  id: number;
  figures: Figures;
}

const isMessage = <T extends Asked | Answered>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/** What only grows: a dead or silent worker's counts are kept, never its gauges (prom-client names types as strings at run time). */
const MONOTONIC: ReadonlySet<string> = new Set(['counter', 'histogram']);
const counts = (figures: Figures): Figures => figures.filter((metric) => MONOTONIC.has(String(metric.type)));

/** In a worker: answers the primary's requests with this registry's figures. */
export function answerPrimary(registry: Registry): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<Asked>(message, ASK)) return;
    registry.getMetricsAsJSON().then(
      (figures) => process.send?.({ type: ANSWER, id: message.id, figures } satisfies Answered),
      () => undefined, // not answered: the primary keeps what it saw last
    );
  });
}

/** In the primary: the figures of every worker, summed, read at each scrape. */
export class ClusterFigures {
  /** Each live worker's figures as last answered. */
  private readonly lastSeen = new Map<number, Figures>();
  /** The counts of workers that died, as last seen (compacted into one at the next scrape). */
  private departed: Figures[] = [];
  private readonly waiting = new Map<number, (figures: Figures) => void>();
  private asked = 0;

  constructor(private readonly timeoutMs = WORKER_METRICS_TIMEOUT_MS) {
    cluster.on('message', (_worker, message: unknown) => {
      if (isMessage<Answered>(message, ANSWER)) this.waiting.get(message.id)?.(message.figures);
    });
    cluster.on('exit', (worker) => {
      const seen = this.lastSeen.get(worker.id);
      this.lastSeen.delete(worker.id);
      if (seen) this.departed.push(counts(seen));
    });
  }

  readonly contentType = AggregatorRegistry.PROMETHEUS_CONTENT_TYPE;

  /** The sum over the workers, in Prometheus's text format. */
  async read(): Promise<string> {
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker?.isConnected() === true);
    const answers = await Promise.all(workers.map((worker) => this.ask(worker)));
    const lists: Figures[] = [];
    let silent = 0;
    workers.forEach((worker, index) => {
      const figures = answers[index];
      if (figures !== undefined) {
        this.lastSeen.set(worker.id, figures);
        lists.push(figures);
        return;
      }
      silent++;
      const seen = this.lastSeen.get(worker.id);
      if (seen) lists.push(counts(seen));
    });
    if (this.departed.length > 1) this.departed = [await AggregatorRegistry.aggregate(this.departed).getMetricsAsJSON()];
    lists.push(...this.departed);
    const registry = AggregatorRegistry.aggregate(lists);
    new Gauge({
      name: 'gateway_metrics_workers_silent',
      help: 'Workers that did not give their figures to this scrape in time: their counts are those last seen, their gauges missing',
      registers: [registry],
    }).set(silent);
    return registry.metrics();
  }

  /** A worker's figures, or undefined when it does not answer within the timeout. */
  private ask(worker: Worker): Promise<Figures | undefined> {
    const id = this.asked++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(undefined), this.timeoutMs);
      const done = (figures: Figures | undefined): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(figures);
      };
      this.waiting.set(id, done);
      try {
        worker.send({ type: ASK, id } satisfies Asked, (error: Error | null) => error && done(undefined));
      } catch {
        done(undefined);
      }
    });
  }
}
