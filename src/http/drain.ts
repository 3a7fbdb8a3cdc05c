// Drain: how the gateway stops without losing a request. Readiness fails first (/ready answers 503)
// while the listener keeps serving for `delayMs`, the time a load balancer or Kubernetes needs to see
// the 503 and stop sending; only then does the server stop accepting, and idle keep-alive sockets are
// closed (a client would otherwise send its next request on a socket about to go away). Requests in
// flight finish, up to `timeoutMs`, after which what is left is ended.
import type { Server, ServerResponse } from 'node:http';
import { integer } from '../settings.js';

export interface DrainOptions {
  /** Time between /ready turning 503 and the listener closing (DRAIN_DELAY_MS; default 5 s in production, else 0). */
  delayMs: number;
  /** Longest wait for the requests in flight once the listener is closed (DRAIN_TIMEOUT_MS; default 30 s). */
  timeoutMs: number;
}

/** How a signal stops the gateway. */
export const DRAIN_SETTINGS = {
  // Only a load balancer needs the delay: outside production nothing watches /ready, and Ctrl-C with
  // nothing in flight should stop the gateway at once.
  delayMs: integer('DRAIN_DELAY_MS', {
    fallback: 0,
    productionFallback: 5_000,
    min: 0,
    max: 600_000,
    unit: 'ms',
    doc: 'after SIGTERM or SIGINT, how long /ready answers 503 while new requests are still served',
  }),
  timeoutMs: integer('DRAIN_TIMEOUT_MS', {
    fallback: 30_000,
    min: 0,
    max: 3_600_000,
    unit: 'ms',
    doc: 'once the listener is closed, how long requests in flight may take to finish',
  }),
};

/** What readiness says: `starting` until the listener is up, `draining` from the first signal on. */
export type ServingPhase = 'starting' | 'serving' | 'draining';

/**
 * The responses not yet finished, so that drain knows when nothing is left in flight and can tell a
 * keep-alive connection that it closes after its answer.
 */
export class InFlight {
  private readonly open = new Set<ServerResponse>();
  private emptied: (() => void) | undefined;
  /** Set once the listener stopped accepting: every answer from then on closes its connection. */
  closing = false;

  track(res: ServerResponse): void {
    if (this.closing) closeAfter(res);
    this.open.add(res);
    res.once('close', () => {
      this.open.delete(res);
      if (this.open.size === 0) this.emptied?.();
    });
  }

  get size(): number {
    return this.open.size;
  }

  /** The responses not yet closed. */
  responses(): Iterable<ServerResponse> {
    return this.open;
  }

  /** Resolves once nothing is in flight. */
  whenEmpty(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.emptied = resolve;
    });
  }

  /** From now on, every answer (those in flight included) closes its connection once sent. */
  closeConnectionsAfterAnswers(): void {
    this.closing = true;
    for (const res of this.open) closeAfter(res);
  }
}

/** Asks node to close the connection after this answer: a `Connection: close` header when still possible. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
  // An answer whose headers are out keeps its keep-alive socket; it is closed once idle (below).
  res.once('finish', () => setImmediate(() => res.socket?.destroySoon()));
}

/** Runs the drain of `server` after `onDraining` (readiness turns 503 there); resolves once all is closed. */
export async function drainServer(server: Server, inFlight: InFlight, options: DrainOptions): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  inFlight.closeConnectionsAfterAnswers();
  server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.timeoutMs);
  });
  await Promise.race([inFlight.whenEmpty(), timedOut]);
  clearTimeout(timer);
  // What is left after the timeout is ended; then no socket keeps the server open.
  server.closeAllConnections();
  await closed;
}
