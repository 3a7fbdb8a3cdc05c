// Admission control: the gateway works on at most `maxActive` HTTP requests at once; the others wait
// in line, up to `maxQueued` in all, and beyond that are turned away at once with a 503.
//
// Within a line, each key has a queue of its own, in arrival order, and the keys take turns (round
// robin): a tenant flooding the gateway gets one start in as many as there are keys waiting, and a key
// with nothing at work goes first, so another tenant's request takes the next free slot. A full line
// makes room for a newcomer by turning away the last of the key with the most waiting (when it has two
// more than the newcomer's): what one key holds, at work and waiting, is its share once others want
// theirs. A request whose client leaves is taken out of its queue at once, and nothing of it is kept.
//
// A key's share of the slots: while other keys of its line have work (at work or waiting), a key starts
// no more than ceil(maxActive / keys with work) at once; a lone key keeps every idle slot. Taking turns
// alone does not make the wait fair on a busy CPU: the requests at work share one event loop, so another
// tenant's request that got the next slot would still run beside the flooding key's other fifteen and
// wait as long as they do. With the share, the flooding key does not take its freed slots back while the
// other's request runs, and its requests at work drain down to their share: slots may stay idle then,
// the price of fairness (docs/operations.md has the figures). Counted per line: a flood of made-up
// keys in the strangers' line does not shrink the share of the keys the upstream accepted.
//
// Lines by what a request's key is: one the upstream accepted lately (`known`: known-keys.ts), or not
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
// half-built results alive at once. A waiting request costs a parked socket and its body (read in full
// before it gets in line: server.ts; nothing of a client that left is kept); an active one costs its
// parsed document, context, loaders, upstream bodies and partial result (docs/performance.md#memory).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { integer } from '../settings.js';

/** How many requests are worked on at once, and how many may wait in line. */
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

/** Requests with no usable key worked on at once: they can reach no data (introspection, `__typename`, an error). */
export const KEYLESS_MAX_ACTIVE = 1;

/** Requests with no usable key started a second, at most (a burst of as many, then evenly). */
export const KEYLESS_PER_SECOND = 50;

/**
 * Which line a request waits in: a key the upstream accepted lately (`known`), another key (`stranger`),
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
   * A stranger waits behind known requests (default: known); `key` (canonical, '' for none) names
   * whose turn it takes.
   */
  admit(req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane?: Lane, key?: string): void;
  /** Takes a slot for res now, without waiting in line: its release, or null when none is free. */
  enter(res: ServerResponse): (() => void) | null;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  lane: Lane;
  /** Whose it is: the canonical Authorization (readAuthorization), '' without one. */
  key: string;
  req: IncomingMessage;
  res: ServerResponse;
  handle: AdmittedHandler;
  onGone(): void;
  /** Turns it away at its deadline, whether or not a slot ever frees up. */
  expiry: NodeJS.Timeout;
  /** Its neighbours in its key's queue. */
  before?: Waiting | undefined;
  after?: Waiting | undefined;
}

/**
 * One key's requests in arrival order: a list linked through its entries, so that one whose client
 * left is taken out at once, wherever it stands, and nothing of it stays behind.
 */
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

/**
 * A lane's line: a queue per key, served in turn (round robin), so that a key with many requests waiting
 * gets one start in as many as there are keys waiting, not all of them. A key that comes with no request
 * at work goes before those already served (a new flow, as fq_codel's), so another tenant's request
 * starts with the next free slot however many one key has queued.
 */
class FairLine {
  private readonly queues = new Map<string, Queue>();
  /** Keys in the order they are served next: new keys first, then the rotation. Each non-empty queue is in one. */
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

  /** Takes it out, wherever it stands. */
  remove(waiting: Waiting): void {
    const queue = this.queues.get(waiting.key);
    if (queue === undefined) return;
    queue.remove(waiting);
    this.size--;
    if (queue.size === 0) this.forget(waiting.key);
  }

  /**
   * The next to start, taken out: the first of the first key in turn that `mayStart`; that key goes to the
   * end of the turns. Keys passed over keep their place.
   */
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

  /** How many of this key's wait. */
  waitingOf(key: string): number {
    return this.queues.get(key)?.size ?? 0;
  }

  /** The last to come of the key with the most waiting (the first such key found). */
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

export function createAdmission(options: AdmissionOptions): Admission {
  let active = 0;
  let queued = 0;
  const lines: Record<Lane, FairLine> = { known: new FairLine(), stranger: new FairLine(), keyless: new FairLine() };
  /** Slots held by each key (keys with none are not in it). */
  const atWork = new Map<string, number>();
  /** Per line: slots held by each key in that line, and each key's requests at work or waiting in it (none: not in it). */
  const atWorkIn: Record<Lane, Map<string, number>> = { known: new Map(), stranger: new Map(), keyless: new Map() };
  const withWork: Record<Lane, Map<string, number>> = { known: new Map(), stranger: new Map(), keyless: new Map() };
  const count = (counts: Map<string, number>, key: string, by: 1 | -1): void => {
    const left = (counts.get(key) ?? 0) + by;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };
  /**
   * Whether a request of `key` may start in `lane` as far as its share goes: its key holds fewer slots of
   * that line than ceil(maxActive / keys with work in it), the key itself counted (the keyless line has
   * its own bounds).
   */
  const mayStart = (lane: Lane, key: string): boolean => {
    if (lane === 'keyless') return true;
    const keys = withWork[lane].size + (withWork[lane].has(key) ? 0 : 1);
    return (atWorkIn[lane].get(key) ?? 0) < Math.ceil(options.maxActive / keys);
  };
  const mayStartIn: Record<Lane, (key: string) => boolean> = {
    known: (key) => mayStart('known', key),
    stranger: (key) => mayStart('stranger', key),
    keyless: () => true,
  };
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
    if (wake !== undefined || lines.keyless.size === 0 || activeKeyless >= KEYLESS_MAX_ACTIVE) return;
    wake = setTimeout(
      () => {
        wake = undefined;
        next();
      },
      Math.ceil(((1 - keylessTokens) / keylessPerSecond) * 1_000),
    );
    wake.unref();
  };

  /** Takes a slot for res: released once, by the returned function or, once watched, when res closes. */
  const take = (res: ServerResponse, lane: Lane, key: string): (() => void) & { watch(): void } => {
    active++;
    count(atWork, key, 1);
    count(atWorkIn[lane], key, 1);
    count(withWork[lane], key, 1);
    if (lane === 'keyless') {
      activeKeyless++;
      keylessTokens--;
    }
    let held = true;
    let watched = false;
    const release = (): void => {
      if (!held) return;
      held = false;
      if (watched) res.off('close', release);
      active--;
      count(atWork, key, -1);
      count(atWorkIn[lane], key, -1);
      count(withWork[lane], key, -1);
      if (lane === 'keyless') activeKeyless--;
      next();
    };
    return Object.assign(release, {
      /** Releases the slot when res closes, if it is still held then. */
      watch: (): void => {
        if (!held || watched) return;
        watched = true;
        res.once('close', release);
      },
    });
  };

  // The close of the response is watched only once the handler is done with it: an answer sent at once
  // (a stored answer) releases its slot before that, and never adds a listener. node tells a close in a
  // later turn, so none is missed.
  const start = (req: IncomingMessage, res: ServerResponse, handle: AdmittedHandler, lane: Lane, key: string): void => {
    const release = take(res, lane, key);
    try {
      handle(req, res, release);
    } finally {
      release.watch();
    }
  };

  /** It is out of its line (taken out by its turn, or by leave): nothing waits for it any more. */
  const outOfLine = (waiting: Waiting): void => {
    queued--;
    count(withWork[waiting.lane], waiting.key, -1);
    clearTimeout(waiting.expiry);
    waiting.res.off('close', waiting.onGone);
  };

  /** Takes it out of its line at once: nothing of it (request, response, body) stays behind. */
  const leave = (waiting: Waiting): void => {
    lines[waiting.lane].remove(waiting);
    outOfLine(waiting);
  };

  /** The first stranger who may start now: one with a key, else one without if its bounds allow. */
  const firstStranger = (): Waiting | undefined =>
    lines.stranger.shift(mayStartIn.stranger) ??
    (lines.keyless.size > 0 && keylessMayStart() ? lines.keyless.shift(mayStartIn.keyless) : undefined);

  /** Who gets the slot that is free: a known request, but a stranger in every STRANGER_TURN; each within its key's share. */
  const pick = (): Waiting | undefined => {
    const known = lines.known.size > 0 && knownInARow < STRANGER_TURN - 1 ? lines.known.shift(mayStartIn.known) : undefined;
    return known ?? firstStranger() ?? lines.known.shift(mayStartIn.known);
  };

  function next(): void {
    while (active < options.maxActive && queued > 0) {
      const waiting = pick();
      // Those waiting are of keys at their share, or without a key and at their bounds: a slot stays idle.
      if (!waiting) return wakeForKeyless();
      knownInARow = waiting.lane === 'known' ? knownInARow + 1 : 0;
      outOfLine(waiting);
      start(waiting.req, waiting.res, waiting.handle, waiting.lane, waiting.key);
    }
  }

  /**
   * Whom a request of `key` in `lane` turns away from a full line: the last to come of the lines after
   * its own (the keyless first, then the strangers' key with the most waiting); else, in its own, the last
   * of the key with the most waiting, when that key has at least two more waiting than its own.
   */
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
        // The client left while waiting: it never takes a slot (and its key's share may have grown).
        onGone: () => {
          leave(waiting);
          next();
        },
        // Every waiting request has the same budget, so the timers fire in line order; node keeps
        // timers of one duration in a single list, so one per waiting request costs O(1) each.
        expiry: setTimeout(() => {
          leave(waiting);
          options.reject(req, res, 'waited');
          next();
        }, options.maxWaitMs),
      };
      res.once('close', waiting.onGone);
      lines[lane].push(waiting, atWork.has(key));
      count(withWork[lane], key, 1);
      queued++;
      if (lane === 'keyless') wakeForKeyless();
    },
    enter(res) {
      if (active >= options.maxActive || queued > 0) return null;
      const release = take(res, 'known', '');
      release.watch();
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
