// Admission control: the gateway works on at most `maxActive` HTTP requests at once; the others wait
// in line, each line in arrival order, up to `maxQueued` in all, and beyond that are turned away at once
// with a 503.
//
// Lines by what a request's key is: one the install accepted lately (`known`: known-keys.ts), or not
// (strangers: a key not accepted yet, or none). A free slot goes to whoever comes, but while known
// requests wait, strangers get only one slot in every STRANGER_TURN that frees up: a flood of requests
// no install would answer slows its senders more than the callers the gateway serves, and a stranger
// still gets in, later (a new key's first request is one; after a restart every key is a stranger's
// until its first answer, and all wait in one line as before). Requests with no usable key can reach
// no data: KEYLESS_MAX_ACTIVE of them are worked on at once, at most KEYLESS_PER_SECOND start in a
// second (each costs a parse and a validation of its document), the rest wait in a line of their own. A
// request that finds the line full turns away the last to come with less of a key (none, then one not
// accepted), not itself.
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

/** While known requests wait, one slot in this many that frees up goes to the stranger first in line. */
export const STRANGER_TURN = 4;

/** Requests with no usable key worked on at once: they can reach no data (introspection, `__typename`, an error). */
export const KEYLESS_MAX_ACTIVE = 1;

/** Requests with no usable key started a second, at most (a burst of as many, then evenly). */
export const KEYLESS_PER_SECOND = 50;

/**
 * Which line a request waits in: a key the install accepted lately (`known`), another key (`stranger`),
 * or none that could be sent (`keyless`: no Authorization, or not one Bearer token; a stranger too).
 */
export type Lane = 'known' | 'stranger' | 'keyless';

export interface AdmissionOptions {
  maxActive: number;
  maxQueued: number;
  /** A request still waiting this long is turned away then (its client has likely given up). */
  maxWaitMs: number;
  /** Requests with no usable key started a second (default KEYLESS_PER_SECOND). */
  keylessPerSecond?: number;
  /** Answers a request that is turned away (the line is full, or it waited too long). */
  reject(req: IncomingMessage, res: ServerResponse, reason: 'full' | 'waited'): void;
}

/** Works on an admitted request; `release` frees its slot before its response closes (once its answer is produced). */
export type AdmittedHandler = (req: IncomingMessage, res: ServerResponse, release: () => void) => void;

export interface Admission {
  /**
   * Calls handle now, or when a slot frees up; the slot is held until `release` is called or res closes.
   * A stranger waits behind known requests (default: known).
   */
  admit(req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane?: Lane): void;
  /** Takes a slot for res now, without waiting in line: its release, or null when none is free. */
  enter(res: ServerResponse): (() => void) | null;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  lane: Lane;
  req: IncomingMessage;
  res: ServerResponse;
  handle: AdmittedHandler;
  /** Set once it left the line without a slot: its client went away, or it waited too long. */
  gone: boolean;
  onGone(): void;
  /** Turns it away at its deadline, whether or not a slot ever frees up. */
  expiry: NodeJS.Timeout;
}

/** A FIFO with a moving head (shift() on a long array is O(n)); entries that left are skipped. */
class Line {
  private entries: (Waiting | undefined)[] = [];
  private head = 0;

  push(waiting: Waiting): void {
    this.entries.push(waiting);
  }

  /** The first still waiting, taken out. */
  shift(): Waiting | undefined {
    while (this.head < this.entries.length) {
      const waiting = this.entries[this.head];
      this.entries[this.head++] = undefined; // let it be collected
      if (this.head > 1024 && this.head * 2 > this.entries.length) {
        this.entries = this.entries.slice(this.head);
        this.head = 0;
      }
      if (waiting && !waiting.gone) return waiting;
    }
    return undefined;
  }

  /** The last still waiting, taken out. */
  pop(): Waiting | undefined {
    while (this.entries.length > this.head) {
      const waiting = this.entries.pop();
      if (waiting && !waiting.gone) return waiting;
    }
    return undefined;
  }
}

export function createAdmission(options: AdmissionOptions): Admission {
  let active = 0;
  let queued = 0;
  const lines: Record<Lane, Line> = { known: new Line(), stranger: new Line(), keyless: new Line() };
  const waitingIn: Record<Lane, number> = { known: 0, stranger: 0, keyless: 0 };
  let activeKeyless = 0;
  // Slots given to known requests since a stranger (keyless or not) last got one.
  let knownInARow = 0;
  // A token bucket: what requests without a key may cost in a second is bounded, not just how many run.
  const keylessPerSecond = options.keylessPerSecond ?? KEYLESS_PER_SECOND;
  let keylessTokens = keylessPerSecond;
  let refilledAt = performance.now();
  let wake: NodeJS.Timeout | undefined;
  const keylessMayStart = (): boolean => {
    const now = performance.now();
    keylessTokens = Math.min(keylessPerSecond, keylessTokens + ((now - refilledAt) / 1_000) * keylessPerSecond);
    refilledAt = now;
    return activeKeyless < KEYLESS_MAX_ACTIVE && keylessTokens >= 1;
  };
  /** Looks at the line again when the next keyless request may start, if one waits for the bucket only. */
  const wakeForKeyless = (): void => {
    if (wake !== undefined || waitingIn.keyless === 0 || activeKeyless >= KEYLESS_MAX_ACTIVE) return;
    wake = setTimeout(
      () => {
        wake = undefined;
        next();
      },
      Math.ceil(((1 - keylessTokens) / keylessPerSecond) * 1_000),
    );
    wake.unref();
  };

  /** Takes a slot for res: released once, by the returned function or when res closes. */
  const take = (res: ServerResponse, lane: Lane): (() => void) => {
    active++;
    if (lane === 'keyless') {
      activeKeyless++;
      keylessTokens--;
    }
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      res.off('close', release);
      active--;
      if (lane === 'keyless') activeKeyless--;
      next();
    };
    res.once('close', release);
    return release;
  };

  const start = (req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane: Lane): void => {
    handle(req, res, take(res, lane));
  };

  /** Takes it out of the count of the line; its entry is skipped when the head reaches it. */
  const leave = (waiting: Waiting): void => {
    waiting.gone = true;
    queued--;
    waitingIn[waiting.lane]--;
    clearTimeout(waiting.expiry);
    waiting.res.off('close', waiting.onGone);
  };

  /** The first stranger who may start now: one with a key, else one without if its bounds allow. */
  const firstStranger = (): Waiting | undefined =>
    lines.stranger.shift() ?? (waitingIn.keyless > 0 && keylessMayStart() ? lines.keyless.shift() : undefined);

  /** Who gets the slot that is free: a known request, but a stranger in every STRANGER_TURN. */
  const pick = (): Waiting | undefined => {
    if (waitingIn.known > 0 && knownInARow < STRANGER_TURN - 1) return lines.known.shift();
    return firstStranger() ?? lines.known.shift();
  };

  function next(): void {
    while (active < options.maxActive && queued > 0) {
      const waiting = pick();
      if (!waiting) return wakeForKeyless(); // only requests without a key wait, and their bounds are reached
      knownInARow = waiting.lane === 'known' ? knownInARow + 1 : 0;
      leave(waiting);
      start(waiting.req, waiting.res, waiting.handle, waiting.lane);
    }
  }

  /** The last to come of the lines after `lane`'s (the keyless first), to make room for a request of `lane`. */
  const lastBelow = (lane: Lane): Waiting | undefined => {
    const below: Lane[] = lane === 'known' ? ['keyless', 'stranger'] : lane === 'stranger' ? ['keyless'] : [];
    for (const other of below) {
      const last = waitingIn[other] > 0 ? lines[other].pop() : undefined;
      if (last) return last;
    }
    return undefined;
  };

  return {
    admit(req, res, handle, lane = 'known') {
      if (active < options.maxActive && (lane !== 'keyless' || (waitingIn.keyless === 0 && keylessMayStart()))) {
        return start(req, res, handle, lane);
      }
      if (queued >= options.maxQueued) {
        // A request with a key takes the place of the last to come with less.
        const last = lastBelow(lane);
        if (!last) return options.reject(req, res, 'full');
        leave(last);
        options.reject(last.req, last.res, 'full');
      }
      const waiting: Waiting = {
        lane,
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
      lines[lane].push(waiting);
      queued++;
      waitingIn[lane]++;
      if (lane === 'keyless') wakeForKeyless();
    },
    enter(res) {
      return active < options.maxActive && queued === 0 ? take(res, 'known') : null;
    },
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
  };
}
