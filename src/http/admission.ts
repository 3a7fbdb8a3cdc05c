// Admission control: at most `maxActive` requests at work, `maxQueued` waiting, the rest answered 503:
// past a busy CPU or upstream pool, more at once only makes each slower and keeps more alive at once.
// Fairness: in a line each key has its own queue and the keys take turns. While other keys have work,
// a key starts at most ceil(maxActive / keys with work): turns alone are not fair on one event loop,
// where the flooding key's other requests would still run beside another tenant's; slots may stay idle,
// the price of fairness (docs/operations.md). Lines: keys the upstream accepted lately, strangers (one
// slot in every STRANGER_TURN while known requests wait) and keyless requests, which reach no data.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { integer } from '../settings.js';

export const ADMISSION_SETTINGS = {
  maxActiveRequests: integer('MAX_ACTIVE_REQUESTS', {
    fallback: 16,
    min: 1,
    max: 10_000,
    unit: 'requests',
    doc: 'HTTP requests worked on at once; more wait in line',
  }),
  maxQueuedRequests: integer('MAX_QUEUED_REQUESTS', {
    fallback: 1_000,
    min: 0,
    max: 1_000_000,
    unit: 'requests',
    doc: 'requests that may wait in line; more are answered 503 at once',
  }),
};

/** While known requests wait, one slot in this many that frees up goes to the stranger first in line. */
export const STRANGER_TURN = 4;

/** Keyless requests at work at once, and started a second (each costs a parse and a validation). */
export const KEYLESS_MAX_ACTIVE = 1;
export const KEYLESS_PER_SECOND = 50;

/** `keyless`: no Authorization, or not one Bearer token (a stranger too). */
export type Lane = 'known' | 'stranger' | 'keyless';

export interface AdmissionOptions {
  maxActive: number;
  maxQueued: number;
  /** Still waiting this long: turned away (its client has likely given up). */
  maxWaitMs: number;
  keylessPerSecond?: number;
  reject(req: IncomingMessage, res: ServerResponse, reason: 'full' | 'waited'): void;
}

/** `release` frees the slot before the response closes (once its answer is produced). */
export type AdmittedHandler = (req: IncomingMessage, res: ServerResponse, release: () => void) => void;

export interface Admission {
  /** Calls handle now, or when a slot frees up; `key` (canonical, '' for none) names whose turn it takes. */
  admit(req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane?: Lane, key?: string): void;
  /** A slot now, without waiting: its release, or null when none is free. */
  enter(res: ServerResponse): (() => void) | null;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  lane: Lane;
  key: string;
  req: IncomingMessage;
  res: ServerResponse;
  handle: AdmittedHandler;
  onGone(): void;
  expiry: NodeJS.Timeout;
  before?: Waiting | undefined;
  after?: Waiting | undefined;
}

/** One key's requests in arrival order, linked so that one whose client left is taken out at once. */
class Queue {
  first: Waiting | undefined;
  last: Waiting | undefined;
  size = 0;

  push(waiting: Waiting): void {
    waiting.before = this.last;
    if (this.last) this.last.after = waiting;
    else this.first = waiting;
    this.last = waiting;
    this.size++;
  }

  remove(waiting: Waiting): void {
    if (waiting.before) waiting.before.after = waiting.after;
    else this.first = waiting.after;
    if (waiting.after) waiting.after.before = waiting.before;
    else this.last = waiting.before;
    waiting.before = undefined;
    waiting.after = undefined;
    this.size--;
  }
}

/** A lane's line: a queue per key, in turn; a key with nothing at work goes first (a new flow, as fq_codel's). */
class FairLine {
  private readonly queues = new Map<string, Queue>();
  private readonly newKeys = new Map<string, Queue>();
  private readonly rotation = new Map<string, Queue>();
  size = 0;

  push(waiting: Waiting, keyAtWork: boolean): void {
    let queue = this.queues.get(waiting.key);
    if (queue === undefined) {
      queue = new Queue();
      this.queues.set(waiting.key, queue);
      (keyAtWork ? this.rotation : this.newKeys).set(waiting.key, queue);
    }
    queue.push(waiting);
    this.size++;
  }

  remove(waiting: Waiting): void {
    const queue = this.queues.get(waiting.key);
    if (queue === undefined) return;
    queue.remove(waiting);
    this.size--;
    if (queue.size === 0) this.forget(waiting.key);
  }

  /** The first of the first key in turn that `mayStart`, taken out; that key goes to the end of the turns. */
  shift(mayStart: (key: string) => boolean): Waiting | undefined {
    const next = this.firstThat(this.newKeys, mayStart) ?? this.firstThat(this.rotation, mayStart);
    if (next === undefined) return undefined;
    const [key, queue] = next;
    const waiting = queue.first as Waiting;
    this.remove(waiting);
    if (queue.size > 0) {
      this.newKeys.delete(key);
      this.rotation.delete(key);
      this.rotation.set(key, queue);
    }
    return waiting;
  }

  private firstThat(turns: Map<string, Queue>, mayStart: (key: string) => boolean): [string, Queue] | undefined {
    for (const entry of turns) if (mayStart(entry[0])) return entry;
    return undefined;
  }

  waitingOf(key: string): number {
    return this.queues.get(key)?.size ?? 0;
  }

  lastOfLongest(): Waiting | undefined {
    let longest: Queue | undefined;
    for (const queue of this.queues.values()) if (longest === undefined || queue.size > longest.size) longest = queue;
    return longest?.last;
  }

  private forget(key: string): void {
    this.queues.delete(key);
    this.newKeys.delete(key);
    this.rotation.delete(key);
  }
}

/** One key's requests at work and with work (at work or waiting): in all lines, and in each. */
class KeyCounts {
  atWork = 0;
  withWork = 0;
  readonly atWorkIn: Record<Lane, number> = { known: 0, stranger: 0, keyless: 0 };
  readonly withWorkIn: Record<Lane, number> = { known: 0, stranger: 0, keyless: 0 };
}

export function createAdmission(options: AdmissionOptions): Admission {
  let active = 0;
  let queued = 0;
  const lines: Record<Lane, FairLine> = { known: new FairLine(), stranger: new FairLine(), keyless: new FairLine() };
  // Counts stay in the map at 0: a key emptied and filled again at every request made V8 shrink and grow it.
  const keys = new Map<string, KeyCounts>();
  const keysWithWork: Record<Lane, number> = { known: 0, stranger: 0, keyless: 0 }; // per line, the keys with work in it
  const countsOf = (key: string): KeyCounts => {
    let counts = keys.get(key);
    if (counts !== undefined) return counts;
    // Idle keys go past 64 and twice the most that can have work (the requests at work or waiting).
    if (keys.size >= 64 + 2 * (active + queued)) for (const [idle, of] of keys) if (of.withWork === 0) keys.delete(idle);
    keys.set(key, (counts = new KeyCounts()));
    return counts;
  };
  const withWork = (counts: KeyCounts, lane: Lane, by: 1 | -1): void => {
    counts.withWork += by;
    counts.withWorkIn[lane] += by;
    if (counts.withWorkIn[lane] === (by === 1 ? 1 : 0)) keysWithWork[lane] += by;
  };
  /** Within its key's share of the line: fewer slots than ceil(maxActive / keys with work), itself counted. */
  const mayStart = (lane: Lane, key: string): boolean => {
    if (lane === 'keyless') return true;
    const counts = keys.get(key);
    const keysIn = keysWithWork[lane] + (counts !== undefined && counts.withWorkIn[lane] > 0 ? 0 : 1);
    return (counts?.atWorkIn[lane] ?? 0) < Math.ceil(options.maxActive / keysIn);
  };
  const mayStartIn: Record<Lane, (key: string) => boolean> = {
    known: (key) => mayStart('known', key),
    stranger: (key) => mayStart('stranger', key),
    keyless: () => true,
  };
  let activeKeyless = 0;
  let knownInARow = 0;
  // A token bucket: what keyless requests cost in a second is bounded, not just how many run.
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
  /**
   * Looks at the line again when the bucket lets the next keyless request start. One that waits for a slot
   * while the bucket holds a token starts when a slot frees (next()): no timer, which would come out negative.
   */
  const wakeForKeyless = (): void => {
    if (wake !== undefined || lines.keyless.size === 0 || activeKeyless >= KEYLESS_MAX_ACTIVE || keylessTokens >= 1) return;
    wake = setTimeout(
      () => {
        wake = undefined;
        next();
      },
      Math.ceil(((1 - keylessTokens) / keylessPerSecond) * 1_000),
    );
    wake.unref();
  };

  const hold = (counts: KeyCounts, lane: Lane, by: 1 | -1): void => {
    active += by;
    counts.atWork += by;
    counts.atWorkIn[lane] += by;
    withWork(counts, lane, by);
    if (lane === 'keyless') activeKeyless += by;
  };

  /** A slot for res, released once: by the function handed to `handle` or, if it was not by then, when res closes. */
  const start = (req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane: Lane, key: string): void => {
    const counts = countsOf(key);
    hold(counts, lane, 1);
    if (lane === 'keyless') keylessTokens--;
    let held = true;
    let watched = false;
    const release = (): void => {
      if (!held) return;
      held = false;
      if (watched) res.off('close', release);
      hold(counts, lane, -1);
      next();
    };
    // The close is watched only once the handler is done: an answer sent at once never adds a listener.
    // node tells a close in a later turn, so none is missed.
    try {
      handle(req, res, release);
    } finally {
      if (held) {
        watched = true;
        res.once('close', release);
      }
    }
  };

  const outOfLine = (waiting: Waiting): void => {
    queued--;
    withWork(countsOf(waiting.key), waiting.lane, -1);
    clearTimeout(waiting.expiry);
    waiting.res.off('close', waiting.onGone);
  };

  const leave = (waiting: Waiting): void => {
    lines[waiting.lane].remove(waiting);
    outOfLine(waiting);
  };

  /** A stranger with a key, else one without if its bounds allow. */
  const firstStranger = (): Waiting | undefined =>
    lines.stranger.shift(mayStartIn.stranger) ??
    (lines.keyless.size > 0 && keylessMayStart() ? lines.keyless.shift(mayStartIn.keyless) : undefined);

  /** A known request, but a stranger in every STRANGER_TURN; each within its key's share. */
  const pick = (): Waiting | undefined => {
    const known = lines.known.size > 0 && knownInARow < STRANGER_TURN - 1 ? lines.known.shift(mayStartIn.known) : undefined;
    return known ?? firstStranger() ?? lines.known.shift(mayStartIn.known);
  };

  function next(): void {
    while (active < options.maxActive && queued > 0) {
      const waiting = pick();
      // All waiting are at their share or bounds.
      if (!waiting) return wakeForKeyless();
      knownInARow = waiting.lane === 'known' ? knownInARow + 1 : 0;
      outOfLine(waiting);
      start(waiting.req, waiting.res, waiting.handle, waiting.lane, waiting.key);
    }
  }

  /** Whom a newcomer turns away from a full line: a lesser line's last first, else its own longest key's. */
  const displaced = (lane: Lane, key: string): Waiting | undefined => {
    const below: Lane[] = lane === 'known' ? ['keyless', 'stranger'] : lane === 'stranger' ? ['keyless'] : [];
    for (const other of below) {
      const last = lines[other].lastOfLongest();
      if (last) return last;
    }
    const longest = lines[lane].lastOfLongest();
    return longest && longest.key !== key && lines[lane].waitingOf(longest.key) >= lines[lane].waitingOf(key) + 2 ? longest : undefined;
  };

  return {
    admit(req, res, handle, lane = 'known', key = '') {
      const free = active < options.maxActive && lines[lane].waitingOf(key) === 0 && mayStart(lane, key);
      if (free && (lane !== 'keyless' || (lines.keyless.size === 0 && keylessMayStart()))) {
        return start(req, res, handle, lane, key);
      }
      if (queued >= options.maxQueued) {
        const last = displaced(lane, key);
        if (!last) return options.reject(req, res, 'full');
        leave(last);
        options.reject(last.req, last.res, 'full');
      }
      const waiting: Waiting = {
        lane,
        key,
        req,
        res,
        handle,
        onGone: () => {
          leave(waiting);
          next();
        },
        // One duration for all: node keeps them in one list, O(1) each, fired in line order.
        expiry: setTimeout(() => {
          leave(waiting);
          options.reject(req, res, 'waited');
          next();
        }, options.maxWaitMs),
      };
      res.once('close', waiting.onGone);
      const counts = countsOf(key);
      lines[lane].push(waiting, counts.atWork > 0);
      withWork(counts, lane, 1);
      queued++;
      if (lane === 'keyless') wakeForKeyless();
    },
    enter(res) {
      if (active >= options.maxActive || queued > 0) return null;
      let release: (() => void) | null = null;
      start(res.req, res, (_req, _res, free) => (release = free), 'known', '');
      return release;
    },
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
  };
}
