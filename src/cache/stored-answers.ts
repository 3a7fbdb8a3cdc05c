// Stored answers: a repeated query (a dashboard reloaded, polled, open in many tabs) is answered in
// front of yoga, before anything of GraphQL runs (no request adaptation, parsing, validation, plan or
// execution), with the bytes and headers the first answer had. Only while that answer is as true as
// the read cache's entries behind it (cache/read-cache.ts), under the same rules:
// - Per key: its name holds the keyed hash of the key (keys.ts), never the key, and a hash of all else
//   that shapes the answer: method, URL, body, Accept, Content-Type, Origin, and "today" in the
//   install's time zone (periods such as "the last 30 days" resolve against it).
// - Lifetime: the shortest remaining lifetime of the reads it used, never stale.
// - Dropped with them: it holds the key's generation and writes counters as the request read them,
//   and is sent only while both still have those values (a 401 or any write with the key moves one
//   on, through any gateway on the store); it is stored only if neither moved meanwhile, in one step
//   in the store (the guard of CacheStore.set).
// - A write the store did not take (Redis cut, paused, slow, full): the key's requests go through
//   GraphQL, and store nothing, until its invalidation reaches Redis (cache/unsettled.ts).
// - Revocation: sent only while the key's `seen` mark says the upstream accepted it within
//   KEY_RECHECK_S; past that the request goes through GraphQL, whose first cached read re-checks it.
// - In the read cache's store: counted within CACHE_MAX_BYTES in memory, shared through Redis.
// - Only a query's answer, 200, without errors, from fresh reads (no stale one: those come from an
//   upstream failure), as JSON: what use-http-caching.ts marks `private, max-age=N` with N > 0.
// Its `extensions` are those the same query answers when all its reads hit the cache (no upstream
// call, every read a hit), so a stored answer says what a repeat through GraphQL would say.
import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dayIn, type Clock } from '../analytics/calendar.js';
import { keyIdOf } from '../api-key.js';
import { ifNoneMatchHas } from '../http-headers.js';
import type { LookedUp } from './scope.js';
import type { CacheStore, StoreLook } from './store.js';
import { type BudgetUse, type StoreCall, safeStore, withinBudget } from './waiting.js';
import { storeNames } from './keys.js';
import { type RequestTrace, withStoredTrace } from '../upstream/request-trace.js';

/** Where a request's answer goes in the store, and under which of its key's counters. */
export interface AnswerSlot {
  name: string;
  keyId: string;
  generation: number;
  writes: number;
  /** The operation that ran, once it runs. */
  operation?: { name: string | null; type: string };
}

/** What a stored answer holds: in the store its body as bytes, the rest as JSON beside them (HeldAnswer). */
export interface StoredAnswer {
  /** The key's generation and writes counters when the request that made it began. */
  generation: number;
  writes: number;
  /** Its headers, name then value, but Content-Length and Cache-Control (made when it is sent). */
  headers: string[];
  body: string;
  operation: string | null;
  cost: number | null;
  reads: number;
}

/** Where answers are kept. */
export interface AnswerKeeper {
  /** Stores `answer` in `slot` for `freshForMs`, unless the key's counters moved since the request began. */
  keep(slot: AnswerSlot, answer: StoredAnswer, freshForMs: number): Promise<void>;
}

/** What the stored answers read and write of a request's state (graphql/request-state.ts). */
export interface AnswerRequest {
  /** The canonical key, or null without one. */
  readonly key: string | null;
  /** Set when the request was looked up and not answered: where its answer goes. */
  answerSlot?: AnswerSlot;
  /** What the lookup spent of the store's budget, and the key's counters it read. */
  lookup?: LookedUp;
  /** The request's trace, when it asked for one (X-Gateway-Trace). */
  readonly trace?: RequestTrace;
  /** The MCP tool whose call it runs, for the log line. */
  readonly tool?: string;
}

export interface AnswerCacheOptions {
  /** The read cache's store (memory or Redis): the answers live and are bounded with its entries. */
  store: CacheStore;
  /** The read cache's lifetimes: how long a key's entries may live (its `has` mark), KEY_RECHECK_S. */
  settledMs: number;
  maxStaleMs: number;
  /** The gateway's clock: "today" in the upstream's time zone, and lifetimes (tests pin it). */
  clock: Clock;
  /** The path GraphQL is served at. */
  endpoint: string;
  /** Told when the store fails (the request then goes through GraphQL). */
  onStoreError?: (operation: string, error: unknown) => void;
  /**
   * How long a request may wait for the store in all (CACHE_STORE_TIMEOUT_MS with Redis; none: no bound),
   * counting only the time it waits on it: the lookup spends some, and the read cache of the request what is left.
   */
  storeBudgetMs?: number;
  /** Each answer stored (metrics). */
  onStored?: () => void;
  /**
   * Whether the key has an invalidation pending after a write the store did not take (cache/unsettled.ts):
   * its requests go through GraphQL, past the store, until Redis has it.
   */
  owes?: (authorization: string) => boolean;
}

/** What a stored answer that was sent says of itself: for the request log, metrics and traces. */
export interface SentAnswer {
  req: IncomingMessage;
  operation: string | null;
  cost: number | null;
  /** The reads behind it (each a hit now). */
  reads: number;
  status: 200 | 304;
  /** When the request was handed over (performance.now()) and how long it took. */
  startedAt: number;
  durationMs: number;
  /** The MCP tool whose call it answered. */
  tool: string | undefined;
}

export interface AnswerCache extends AnswerKeeper {
  /**
   * Answers the request from a stored answer, or calls `next` (yoga) when there is none to send: then
   * its state says what the lookup spent and found. What `next` answers is stored by `plugin` when it
   * can be; `sent` is called once a stored answer is.
   */
  serve(req: IncomingMessage, res: ServerResponse, state: AnswerRequest, next: () => void, sent?: () => void): void;
  /** Calls `listener` with each stored answer sent (what GraphQL's steps would have logged, counted, traced). */
  whenSent(listener: (sent: SentAnswer) => void): void;
}

/** A header's value as one string ('' when absent). */
const headerOf = (req: IncomingMessage, name: string): string => {
  const value = req.headers[name];
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
};

/** A stored answer as the store holds it: all but its body as the record's value, the body as its bytes. */
type HeldAnswer = Omit<StoredAnswer, 'body'>;

/** Where a request's answer is in the store, under which key. */
interface Place {
  authorization: string;
  keyId: string;
  name: string;
}

/** A stored answer found for a request, to send. */
interface Hit {
  answer: HeldAnswer;
  body: Uint8Array;
  maxAge: number;
}

/** The largest request (head and body) hashed in the reused buffer; a larger one is hashed from a buffer of its own. */
const SCRATCH_MAX_BYTES = 64 * 1024;

const textOf = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

export function createAnswerCache(options: AnswerCacheOptions): AnswerCache {
  const { store, clock } = options;
  const listeners: ((sent: SentAnswer) => void)[] = [];
  const safely = safeStore(options.onStoreError);

  /** The hash of all that shapes the answer but the key, or null when it is not a GraphQL GET or POST. */
  function requestHash(req: IncomingMessage): string | null {
    const { method, url } = req;
    if (method !== 'GET' && method !== 'POST') return null;
    if (url === undefined || (url !== options.endpoint && !url.startsWith(`${options.endpoint}?`))) return null;
    const body = (req as { body?: Buffer }).body;
    if (method === 'POST' && body === undefined) return null;
    const today = todayNow();
    const accept = headerOf(req, 'accept');
    const contentType = headerOf(req, 'content-type');
    const origin = headerOf(req, 'origin');
    const last = lastHashed;
    if (
      last !== undefined &&
      last.url === url &&
      last.method === method &&
      last.accept === accept &&
      last.contentType === contentType &&
      last.origin === origin &&
      last.today === today &&
      (body === undefined ? last.body === undefined : last.body?.equals(body) === true)
    ) {
      return last.hash;
    }
    const head = `${method}\n${url}\n${accept}\n${contentType}\n${origin}\n${today}\n`;
    // One hash of one buffer: no hash object to make and feed for each request.
    const digest = hash('sha256', body === undefined ? head : hashed(head, body), 'base64url');
    lastHashed =
      body === undefined || body.byteLength <= SCRATCH_MAX_BYTES
        ? { method, url, accept, contentType, origin, today, body: body && Buffer.from(body), hash: digest }
        : undefined;
    return digest;
  }

  /**
   * The last request hashed (its body a copy), part by part: the same request again (a dashboard polled,
   * reloaded) is compared, not hashed.
   */
  let lastHashed:
    | {
        method: string;
        url: string;
        accept: string;
        contentType: string;
        origin: string;
        today: string;
        body: Buffer | undefined;
        hash: string;
      }
    | undefined;

  /**
   * "Today" in the install's time zone, worked out once a minute: every time zone's offset today is whole
   * minutes, so its days begin on a minute of UTC.
   */
  let todayOf = { minute: Number.NaN, day: '' };
  const todayNow = (): string => {
    const now = clock.now();
    const minute = Math.floor(now / 60_000);
    if (minute !== todayOf.minute) todayOf = { minute, day: dayIn(clock.timeZone, now) };
    return todayOf.day;
  };

  /** One buffer for the request's hash to read, reused: a request's head and body are copied in, no new buffer each time. */
  let scratch = Buffer.allocUnsafeSlow(4096);
  const hashed = (head: string, body: Buffer): Buffer => {
    const size = Buffer.byteLength(head) + body.byteLength;
    if (size > SCRATCH_MAX_BYTES) return Buffer.concat([Buffer.from(head), body]);
    if (size > scratch.byteLength) scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX_BYTES, size * 2));
    const at = scratch.write(head);
    body.copy(scratch, at);
    return scratch.subarray(0, size);
  };

  /** Where the request's answer is, under the store's `secret`; null when it has none to look up. */
  function placeOf(req: IncomingMessage, state: AnswerRequest, secret: string): Place | null {
    const authorization = state.key;
    if (authorization === null) return null;
    const request = requestHash(req);
    if (request === null) return null;
    const keyId = keyIdOf(secret, authorization);
    return { authorization, keyId, name: storeNames.answer(keyId, request) };
  }

  /** What a look asks besides the answer: the key's generation and writes counters, and its seen mark. */
  const countersOf = (place: Place): string[] => [storeNames.generation(place.keyId), storeNames.writes(place.keyId)];
  const marksOf = (place: Place): string[] => [storeNames.seen(place.keyId)];

  /**
   * What the store's answer says: the stored answer to send if it is there, its key's counters unmoved,
   * fresh, and its key seen lately; else where the request's answer goes (set in its state).
   */
  function hitIn(found: StoreLook, place: Place, state: AnswerRequest): Hit | undefined {
    const { record, counters, marks } = found;
    const [generation = 0, writes = 0] = counters;
    if (record !== undefined && record.bytes !== undefined && marks[0] === true) {
      const answer = record.value as HeldAnswer;
      const maxAge = Math.floor((record.freshUntil - clock.now()) / 1000);
      if (answer.generation === generation && answer.writes === writes && maxAge > 0) return { answer, body: record.bytes, maxAge };
    }
    state.answerSlot = { name: place.name, keyId: place.keyId, generation, writes };
    return undefined;
  }

  /** The lookup through a store that answers at once (memory): no promise, no budget. */
  function lookNow(req: IncomingMessage, state: AnswerRequest): Hit | undefined {
    try {
      const secret = store.secretNow?.();
      if (secret === undefined || state.key === null || options.owes?.(state.key) === true) return undefined;
      const place = placeOf(req, state, secret);
      const found = place === null ? undefined : store.lookNow?.(place.name, countersOf(place), marksOf(place));
      return place === null || found === undefined ? undefined : hitIn(found, place, state);
    } catch (error) {
      options.onStoreError?.('look', error);
      return undefined;
    }
  }

  async function lookUp(req: IncomingMessage, state: AnswerRequest, ask: StoreCall): Promise<Hit | undefined> {
    if (state.key === null || options.owes?.(state.key) === true) return undefined;
    // The secret at hand when the store has it (Redis read it lately): no call, no timer.
    const secret = store.secretNow?.() ?? (await ask('secret', () => store.secret()));
    if (secret === undefined) return undefined;
    const place = placeOf(req, state, secret);
    if (place === null) return undefined;
    const found = await ask('look', () => store.look(place.name, countersOf(place), marksOf(place)));
    // A look sent while the connection was being made again is answered once it is ready: not to be trusted.
    if (found === undefined || options.owes?.(place.authorization) === true) return undefined;
    return hitIn(found, place, state);
  }

  function send(req: IncomingMessage, res: ServerResponse, hit: Hit, startedAt: number, state: AnswerRequest): void {
    const { trace } = state;
    const { answer, maxAge } = hit;
    // A traced request's answer says it was stored, with its own trace: kept by nobody.
    const body = trace ? withStoredTrace(textOf(hit.body), trace) : hit.body;
    const headers = answer.headers.concat('cache-control', trace ? 'no-store' : `private, max-age=${maxAge}`);
    let status: 200 | 304 = 200;
    if (req.method === 'GET') {
      let etag: string | undefined;
      for (let i = 0; i < answer.headers.length; i += 2) if (answer.headers[i] === 'etag') etag = answer.headers[i + 1];
      if (etag !== undefined && ifNoneMatchHas(headerOf(req, 'if-none-match') || null, etag)) status = 304;
    }
    if (status === 304) {
      const kept: string[] = [];
      for (let i = 0; i < headers.length; i += 2)
        if (headers[i] !== 'content-type') kept.push(headers[i] as string, headers[i + 1] as string);
      res.writeHead(304, kept);
      res.end();
    } else {
      headers.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
      res.writeHead(200, headers);
      res.end(body);
    }
    if (listeners.length === 0) return;
    const sent: SentAnswer = {
      req,
      operation: answer.operation,
      cost: answer.cost,
      reads: answer.reads,
      status,
      startedAt,
      durationMs: Math.round((performance.now() - startedAt) * 100) / 100,
      tool: state.tool,
    };
    for (const listener of listeners) listener(sent);
  }

  /** Stores the answer, unless a write or a revocation moved the key's counters since the request began. */
  async function keep(slot: AnswerSlot, answer: StoredAnswer, freshForMs: number): Promise<void> {
    const freshUntil = clock.now() + freshForMs;
    // Said before the answer is there, as for every entry: what a 401 or a write must drop.
    await safely('mark', () => store.mark(storeNames.hasEntries(slot.keyId), options.settledMs + options.maxStaleMs));
    const guard = { [storeNames.generation(slot.keyId)]: slot.generation, [storeNames.writes(slot.keyId)]: slot.writes };
    const { body, ...held } = answer;
    const record = { value: held satisfies HeldAnswer, bytes: Buffer.from(body), freshUntil, staleUntil: freshUntil };
    const stored = await safely('set', () => store.set(slot.name, record, guard));
    if (stored === true) options.onStored?.();
  }

  return {
    keep,
    whenSent: (listener) => void listeners.push(listener),
    serve(req, res, state, next, sent) {
      const startedAt = performance.now();
      /** Sends the answer found, or hands the request to GraphQL with what its lookup spent and found. */
      const answer = (hit: Hit | undefined, use: BudgetUse): void => {
        if (hit === undefined) {
          const found = state.answerSlot;
          state.lookup = { use, ...(found ? { scope: { keyId: found.keyId, generation: found.generation, lists: found.writes } } : {}) };
          return next();
        }
        // Its client left while the store answered: nothing to send, and nothing more to do.
        if (!res.destroyed) send(req, res, hit, startedAt, state);
        sent?.();
      };
      if (store.lookNow !== undefined) return answer(lookNow(req, state), { usedMs: 0, spent: false });
      // One budget for the store, this lookup's and then the read cache's (cache/read-cache.ts).
      const ask = withinBudget(safely, options.storeBudgetMs);
      lookUp(req, state, ask).then(
        (hit) => answer(hit, ask.use()),
        () => answer(undefined, ask.use()),
      );
    },
  };
}
