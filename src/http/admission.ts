// Admission control: the gateway works on at most `maxActive` HTTP requests at once; the others wait
// in line, in arrival order, up to `maxQueued`, and beyond that are turned away at once with a 503.
//
// Why: past the point where the CPU or the upstream pool is busy, taking more requests in only makes
// every one of them slower (they share the same event loop and sockets) and keeps all their
// half-built results alive at once. A waiting request costs a parked socket and its body (read in
// full before it gets in line: server.ts); an active one costs its parsed document, context, loaders,
// upstream bodies and partial result. What it does to memory under load, alone and with
// HEAP_GROWING_PERCENT (main.ts), is measured in docs/performance.md#memory.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** MAX_ACTIVE_REQUESTS and MAX_QUEUED_REQUESTS when unset. */
export const ADMISSION_DEFAULTS = { maxActive: 16, maxQueued: 1_000 } as const;

export interface AdmissionOptions {
  maxActive: number;
  maxQueued: number;
  /** A request still waiting this long is turned away then (its client has likely given up). */
  maxWaitMs: number;
  /** Answers a request that is turned away (the line is full, or it waited too long). */
  reject(req: IncomingMessage, res: ServerResponse, reason: 'full' | 'waited'): void;
}

/** Works on an admitted request; `release` frees its slot before its response closes (once its answer is produced). */
export type AdmittedHandler = (req: IncomingMessage, res: ServerResponse, release: () => void) => void;

export interface Admission {
  /** Calls handle now, or when a slot frees up; the slot is held until `release` is called or res closes. */
  admit(req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler): void;
  /** Takes a slot for res now, without waiting in line: its release, or null when none is free. */
  enter(res: ServerResponse): (() => void) | null;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  req: IncomingMessage;
  res: ServerResponse;
  handle: AdmittedHandler;
  /** Set once it left the line without a slot: its client went away, or it waited too long. */
  gone: boolean;
  onGone(): void;
  /** Turns it away at its deadline, whether or not a slot ever frees up. */
  expiry: NodeJS.Timeout;
}

export function createAdmission(options: AdmissionOptions): Admission {
  let active = 0;
  let queued = 0;
  // A FIFO with a moving head: shift() on a long array is O(n).
  let line: (Waiting | undefined)[] = [];
  let head = 0;

  /** Takes a slot for res: released once, by the returned function or when res closes. */
  const take = (res: ServerResponse): (() => void) => {
    active++;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      res.off('close', release);
      active--;
      next();
    };
    res.once('close', release);
    return release;
  };

  const start = (req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler): void => {
    handle(req, res, take(res));
  };

  /** Takes it out of the count of the line; its entry is skipped when the head reaches it. */
  const leave = (waiting: Waiting): void => {
    waiting.gone = true;
    queued--;
    clearTimeout(waiting.expiry);
    waiting.res.off('close', waiting.onGone);
  };

  function next(): void {
    while (active < options.maxActive && head < line.length) {
      const waiting = line[head];
      line[head++] = undefined; // let it be collected
      if (head > 1024 && head * 2 > line.length) {
        line = line.slice(head);
        head = 0;
      }
      if (!waiting || waiting.gone) continue;
      leave(waiting);
      start(waiting.req, waiting.res, waiting.handle);
    }
  }

  return {
    admit(req, res, handle) {
      if (active < options.maxActive) return start(req, res, handle);
      if (queued >= options.maxQueued) return options.reject(req, res, 'full');
      const waiting: Waiting = {
        req,
        res,
        handle,
        gone: false,
        // The client left while waiting: it never takes a slot.
        onGone: () => leave(waiting),
        // Every waiting request has the same budget, so the timers fire in line order; node keeps
        // timers of one duration in a single list, so one per waiting request costs O(1) each.
        expiry: setTimeout(() => {
          leave(waiting);
          options.reject(req, res, 'waited');
        }, options.maxWaitMs),
      };
      res.once('close', waiting.onGone);
      line.push(waiting);
      queued++;
    },
    enter(res) {
      return active < options.maxActive && queued === 0 ? take(res) : null;
    },
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
  };
}
