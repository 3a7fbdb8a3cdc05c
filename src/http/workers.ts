// WORKERS: a primary that serves nothing and that many workers sharing the port (node:cluster). A dead
// worker is replaced with backoff, so one that crashes at start does not spin.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { custom, shown } from '../settings.js';

/** The message a worker drains on, as on its own first SIGTERM (main.ts). */
export const DRAIN_MESSAGE = 'gateway:drain';

const WORKERS_PROBLEM = 'WORKERS must be auto (one per core) or an integer from 1 to 256';

export const WORKER_SETTINGS = {
  workers: custom<number | 'auto'>(
    'WORKERS',
    z
      .string()
      .toLowerCase()
      .refine((value) => value === 'auto' || (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 256), {
        error: (issue) => `${WORKERS_PROBLEM}, got "${shown(issue.input)}"`,
      })
      .transform((value) => (value === 'auto' ? 'auto' : Number(value))),
    { fallback: 1, shown: '1', unit: 'count, or `auto`', doc: 'processes sharing the port, or `auto`: one per available core' },
  ),
};

export function workerCount(value: number | 'auto'): number {
  return value === 'auto' ? availableParallelism() : value;
}

export interface PrimaryOptions {
  workers: number;
  /** The embedded sandbox's URL. */
  env?: Record<string, string>;
  onStopped?: () => Promise<void>;
}

// A worker that dies within this long of its start counts as crashing: the next one waits longer.
const STABLE_MS = 10_000;
const MAX_BACKOFF_MS = 10_000;

/** A second SIGTERM or SIGINT exits at once. */
export function runPrimary(options: PrimaryOptions): void {
  let stopping = false;
  let crashes = 0;
  const startedAt = new Map<Worker, number>();

  const fork = (): void => {
    const worker = cluster.fork(options.env ?? {});
    startedAt.set(worker, Date.now());
    console.log(`Worker ${worker.id} started (pid ${worker.process.pid})`);
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) void stopped();
      return;
    }
    crashes = lived >= STABLE_MS ? 0 : crashes + 1;
    const backoffMs = crashes === 0 ? 0 : Math.min(100 * 2 ** (crashes - 1), MAX_BACKOFF_MS);
    console.error(`Worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); a new one in ${backoffMs} ms`);
    setTimeout(() => {
      if (!stopping) fork();
    }, backoffMs);
  });

  const stopped = async (): Promise<void> => {
    await options.onStopped?.();
    process.exit(0);
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      console.error(`${signal} again: stopping the workers without waiting for the requests in flight`);
      for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    console.log(`${signal}: draining ${startedAt.size} workers`);
    if (startedAt.size === 0) void stopped();
    // A message, not a signal: a worker that also got the terminal's SIGINT must not take this as a second one.
    for (const worker of startedAt.keys()) if (worker.isConnected()) worker.send(DRAIN_MESSAGE);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  for (let i = 0; i < options.workers; i++) fork();
}
