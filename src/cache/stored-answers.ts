// Stored answers: a repeated query (a dashboard reloaded, polled, open in many tabs) is answered in front of yoga,
// before anything of GraphQL runs (no request adaptation, parsing, validation, plan or execution), with the bytes
// the first answer had. Only while that answer is as true as the read cache's entries behind it (cache/read-cache.ts):
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
//   upstream failure), as JSON: what the ending (http/answer.ts) marks `private, max-age=N` with N > 0.
// Its `extensions` are those the same query answers when all its reads hit the cache (no upstream call, every
// read a hit), so a stored answer says what a repeat through GraphQL would say. This module decides; it writes
// nothing to the client: the HTTP layer's ending (http/answer.ts) sends it as every other, with this request's headers.
import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { dayIn, type Clock } from '../analytics/calendar.js';
import { keyIdOf } from '../api-key.js';
import type { StoreSession } from './scope.js';
import type { CacheStore, StoreLook } from './store.js';
import { type StoreCall, safeStore, withinBudget } from './waiting.js';
import { storeNames } from './keys.js';

/** What a stored answer holds: its body, and what its sending and its log line need. */
export interface StoredAnswer {
  body: string;
  /** The media type it was answered in (application/json or application/graphql-response+json). */
  contentType: string;
  /** The ETag of its data (a GET's answer), if it had one. */
  etag?: string;
  operation: string | null;
  cost: number | null;
  /** The reads behind it (each a hit when it is sent). */
  reads: number;
}

/** A stored answer found for a request, to send: fresh for `maxAgeS` more seconds. */
export interface StoredHit extends Omit<StoredAnswer, 'body'> {
  body: Uint8Array;
  maxAgeS: number;
}

/** What a lookup found: the answer to send, or nothing, and the store's part of the request either way. */
export interface Looked {
  hit?: StoredHit;
  session: StoreSession;
}

export interface StoredAnswersOptions {
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

export interface StoredAnswers {
  /**
   * The stored answer for the request made with `key`, if one may be sent; else where its answer goes
   * (the session's `answerName`). At once with a store that answers at once (memory).
   */
  lookUp(req: IncomingMessage, key: string | null): Looked | Promise<Looked>;
  /** Stores `answer` where the session says, for `freshForMs`, unless the key's counters moved since the request began. */
  keep(session: StoreSession, answer: StoredAnswer, freshForMs: number): Promise<void>;
}

/** A header's value as one string ('' when absent). */
const headerOf = (req: IncomingMessage, name: string): string => {
  const value = req.headers[name];
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
};

/** A stored answer as the store holds it: all but its body as the record's value, the body as its bytes. */
interface HeldAnswer extends Omit<StoredAnswer, 'body'> {
  /** The key's generation and writes counters when the request that made it began. */
  generation: number;
  writes: number;
}

/** Where a request's answer is in the store, under which key. */
interface Place {
  authorization: string;
  keyId: string;
  name: string;
}

/** The largest request (head and body) hashed in the reused buffer; a larger one is hashed from a buffer of its own. */
const SCRATCH_MAX_BYTES = 64 * 1024;

const NOTHING_SPENT = { usedMs: 0, spent: false };

export function createStoredAnswers(options: StoredAnswersOptions): StoredAnswers {
  const { store, clock } = options;
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
  function placeOf(req: IncomingMessage, authorization: string, secret: string): Place | null {
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
   * fresh, and its key seen lately; else where the request's answer goes.
   */
  function hitIn(found: StoreLook, place: Place, session: StoreSession): Looked {
    const { record, counters, marks } = found;
    const [generation = 0, writes = 0] = counters;
    if (record !== undefined && record.bytes !== undefined && marks[0] === true) {
      const { generation: heldGeneration, writes: heldWrites, ...answer } = record.value as HeldAnswer;
      const maxAgeS = Math.floor((record.freshUntil - clock.now()) / 1000);
      if (heldGeneration === generation && heldWrites === writes && maxAgeS > 0)
        return { hit: { ...answer, body: record.bytes, maxAgeS }, session };
    }
    session.scope = { keyId: place.keyId, generation, lists: writes };
    session.answerName = place.name;
    return { session };
  }

  /** The lookup through a store that answers at once (memory): no promise, no budget. */
  function lookNow(req: IncomingMessage, key: string | null): Looked {
    const session: StoreSession = { use: NOTHING_SPENT };
    try {
      const secret = store.secretNow?.();
      if (secret === undefined || key === null || options.owes?.(key) === true) return { session };
      const place = placeOf(req, key, secret);
      const found = place === null ? undefined : store.lookNow?.(place.name, countersOf(place), marksOf(place));
      return place === null || found === undefined ? { session } : hitIn(found, place, session);
    } catch (error) {
      options.onStoreError?.('look', error);
      return { session };
    }
  }

  async function lookUp(req: IncomingMessage, key: string | null, ask: StoreCall, session: StoreSession): Promise<Looked> {
    if (key === null || options.owes?.(key) === true) return { session };
    // The secret at hand when the store has it (Redis read it lately): no call, no timer.
    const secret = store.secretNow?.() ?? (await ask('secret', () => store.secret()));
    if (secret === undefined) return { session };
    const place = placeOf(req, key, secret);
    if (place === null) return { session };
    const found = await ask('look', () => store.look(place.name, countersOf(place), marksOf(place)));
    // A look sent while the connection was being made again is answered once it is ready: not to be trusted.
    if (found === undefined || options.owes?.(place.authorization) === true) return { session };
    return hitIn(found, place, session);
  }

  /** Stores the answer, unless a write or a revocation moved the key's counters since the request began. */
  async function keep(session: StoreSession, answer: StoredAnswer, freshForMs: number): Promise<void> {
    const { scope, answerName } = session;
    if (scope === undefined || answerName === undefined) return;
    const freshUntil = clock.now() + freshForMs;
    // Said before the answer is there, as for every entry: what a 401 or a write must drop.
    await safely('mark', () => store.mark(storeNames.hasEntries(scope.keyId), options.settledMs + options.maxStaleMs));
    const guard = { [storeNames.generation(scope.keyId)]: scope.generation, [storeNames.writes(scope.keyId)]: scope.lists };
    const { body, ...rest } = answer;
    const held: HeldAnswer = { ...rest, generation: scope.generation, writes: scope.lists };
    const record = { value: held, bytes: Buffer.from(body), freshUntil, staleUntil: freshUntil };
    const stored = await safely('set', () => store.set(answerName, record, guard));
    if (stored === true) options.onStored?.();
  }

  return {
    keep,
    lookUp(req, key) {
      if (store.lookNow !== undefined) return lookNow(req, key);
      // One budget for the store, this lookup's and then the read cache's (cache/read-cache.ts).
      const ask = withinBudget(safely, options.storeBudgetMs);
      const session: StoreSession = { use: NOTHING_SPENT };
      const spent = (looked: Looked): Looked => {
        looked.session.use = ask.use();
        return looked;
      };
      return lookUp(req, key, ask, session).then(spent, () => spent({ session }));
    },
  };
}
