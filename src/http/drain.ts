// Drain: /ready answers 503 while the listener serves on for `delayMs`, for a load balancer to stop
// sending; then it stops accepting and closes idle keep-alive sockets (a client would send its next
// request on them); requests in flight finish within `timeoutMs`, and what is left is ended.
import type { Server, ServerResponse } from 'node:http';
import { type SettingsOf, integer } from '../settings.js';

export type DrainOptions = SettingsOf<typeof DRAIN_SETTINGS>;

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

export type ServingPhase = 'starting' | 'serving' | 'draining';

/** The responses not yet finished: drain waits for them, and closes their connections after them. */
export class InFlight {
  private readonly open = new Set<ServerResponse>();
  private emptied: (() => void) | undefined;
  private closing = false;

  track(res: ServerResponse): void {
    if (this.closing) closeAfter(res);
    this.open.add(res);
    res.once('close', () => {
      this.open.delete(res);
      if (this.open.size === 0) this.emptied?.();
    });
  }

  responses(): Iterable<ServerResponse> {
    return this.open;
  }

  whenEmpty(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.emptied = resolve;
    });
  }

  closeConnectionsAfterAnswers(): void {
    this.closing = true;
    for (const res of this.open) closeAfter(res);
  }
}

/** `Connection: close` when still possible. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
  // An answer whose headers are out keeps its keep-alive socket; it is closed once idle (below).
  res.once('finish', () => setImmediate(() => res.socket?.destroySoon()));
}

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
  server.closeAllConnections();
  await closed;
}
