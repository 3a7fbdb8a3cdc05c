// WORKERS > 1: each scrape sums the workers' figures, asked over IPC. A dead or silent worker's last
// counts are kept (Prometheus would read a fall as a reset), its gauges not. prom-client's clusterMetrics
// fails the whole scrape on one timeout and forgets the dead; its `aggregate` is used.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, type Registry } from 'prom-client';

type Figures = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

const ASK = 'gateway:metrics?';
const ANSWER = 'gateway:metrics';

/** Well under Prometheus's scrape timeout. */
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

/** What only grows (prom-client names types as strings at run time). */
const MONOTONIC: ReadonlySet<string> = new Set(['counter', 'histogram']);
const counts = (figures: Figures): Figures => figures.filter((metric) => MONOTONIC.has(String(metric.type)));

export function answerPrimary(registry: Registry): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<Asked>(message, ASK)) return;
    registry.getMetricsAsJSON().then(
      (figures) => process.send?.({ type: ANSWER, id: message.id, figures } satisfies Answered),
      () => undefined, // not answered: the primary keeps what it saw last
    );
  });
}

export class ClusterFigures {
  private readonly lastSeen = new Map<number, Figures>();
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
