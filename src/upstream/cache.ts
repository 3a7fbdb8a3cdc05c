// A read cache of decoded upstream answers, per API key. A real install throttles each key (60 calls a
// minute), and most of what a dashboard reads is past days, which never change: statistics whose range
// ends before today (in the install's time zone) are settled and kept long; ranges that reach today,
// websites and lists are kept briefly; a write drops what it touched. Entries are found only by
// requests with the same key: the cache key holds a keyed hash (HMAC) of the key, never the key.
//
// Rules that keep it honest:
// - Revocation: a cached answer is given only while the upstream has accepted the key within
//   `keyRecheckMs`; past that, one upstream call re-validates it first, and a 401 drops the key's entries.
// - Stale on failure: when the upstream cannot answer (429, 5xx, timeout, open breaker), an entry up
//   to `maxStaleMs` past its lifetime answers instead, flagged stale.
// - Coalescing: concurrent identical reads with the same key share one upstream call, whichever
//   requests they came from.
// - A store that fails or is slow never fails a request: the read goes to the upstream.
import { createHmac } from 'node:crypto';
import { dayIn } from '../analytics/calendar.js';
import type { Page, Stat, StatsQuery, Website, WebsiteListQuery } from '../domain.js';
import { GatewayError } from '../errors.js';
import type { CacheRecord, CacheStore } from './cache-store.js';
import { statsQueryKey, websiteListKey } from './loaders.js';

export interface CacheOptions {
  store: CacheStore;
  /** Lifetime of statistics whose range ends before today (CACHE_TTL_SETTLED_S). */
  settledMs: number;
  /** Lifetime of everything else (CACHE_TTL_RECENT_S). */
  recentMs: number;
  /** How long past its lifetime an entry may answer when the upstream cannot (CACHE_MAX_STALE_S). */
  maxStaleMs: number;
  /** How recently the upstream must have accepted a key for its cached answers to be given (KEY_RECHECK_S). */
  keyRecheckMs: number;
  /** The install's time zone, for "today" (UPSTREAM_TIMEZONE). */
  timeZone: string;
  now?: () => number;
  /** Told when the store fails (the read then goes to the upstream). */
  onStoreError?: (operation: string, error: unknown) => void;
  /**
   * How long one request may wait for the store in all (CACHE_STORE_TIMEOUT_MS): past it, the rest of
   * its reads go to the upstream. Writes to the store happen after the answer and are not counted.
   */
  storeBudgetMs?: number;
}

/** What one request's reads did with the cache: for `extensions.cache`, the log and Cache-Control. */
export interface CacheUsage {
  hits: number;
  misses: number;
  stale: number;
  /** Seconds the answer stays fresh: the shortest remaining lifetime of what it used; null when nothing. */
  freshForS: number | null;
}

/** The reads a request makes, through the cache. */
export interface RequestCache {
  website(id: string, fetch: () => Promise<Website>): Promise<Website>;
  websitePage(query: WebsiteListQuery, fetch: () => Promise<Page<Website>>): Promise<Page<Website>>;
  statPage(query: StatsQuery, fetch: () => Promise<Page<Stat>>): Promise<Page<Stat>>;
  /** After a write to a website: drop it and the key's lists. */
  written(websiteId: string | null): Promise<void>;
  readonly usage: CacheUsage;
}

/** Failures during which a stale entry answers instead. */
function isOutage(error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  if (error.code === 'RATE_LIMITED' || error.code === 'UPSTREAM_TIMEOUT' || error.code === 'UPSTREAM_UNAVAILABLE') return true;
  return error.code === 'UPSTREAM_ERROR' && (error.details.upstreamStatus ?? 500) >= 500;
}

/**
 * A failure without an answer from the upstream (no status) that is not a timeout: above all, the
 * request whose call others joined went away and its call was aborted; also an open breaker or a
 * refused connection, which a second try finds at once.
 */
const isLeft = (error: unknown): boolean =>
  error instanceof GatewayError && error.code === 'UPSTREAM_UNAVAILABLE' && error.details.upstreamStatus === undefined;

const isRevoked = (error: unknown): boolean => error instanceof GatewayError && error.details.upstreamStatus === 401;


export interface ResponseCache {
  /** The cache of one request made with `authorization`; `validate` is one cheap upstream read. */
  forRequest(authorization: string | null, validate: () => Promise<unknown>): RequestCache;
  close(): Promise<void>;
}

export function createResponseCache(options: CacheOptions): ResponseCache {
  const { store } = options;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, Promise<CacheRecord>>();
  const validating = new Map<string, Promise<void>>();

  /** A store call that cannot fail the request: undefined (a miss) when the store fails. */
  async function safely<T>(operation: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      options.onStoreError?.(operation, error);
      return undefined;
    }
  }

  /**
   * A revoked key's entries become unreachable (its generation moves on). Only a key that has entries
   * gets a generation: a stream of unknown keys answered 401 leaves nothing behind in the store.
   */
  async function dropEntriesOf(keyId: string): Promise<void> {
    if (await safely('marked', () => store.marked(`has:${keyId}`))) await safely('bump', () => store.bump(`gen:${keyId}`));
  }

  function forRequest(authorization: string | null, validate: () => Promise<unknown>): RequestCache {
    const usage: CacheUsage = { hits: 0, misses: 0, stale: 0, freshForS: null };
    // Real time, not `now` (which tests pin): the budget is about waiting.
    const budgetEnd = performance.now() + (options.storeBudgetMs ?? Number.POSITIVE_INFINITY);
    /** A store read on the request's path, within what is left of its budget; undefined past it. */
    const ask = <T>(operation: string, call: () => Promise<T>): Promise<T | undefined> => {
      const left = budgetEnd - performance.now();
      if (left <= 0) return Promise.resolve(undefined);
      if (!Number.isFinite(left)) return safely(operation, call);
      return safely(operation, () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the store took longer than this request's ${options.storeBudgetMs} ms`)), left);
        });
        return Promise.race([call(), late]).finally(() => clearTimeout(timer));
      });
    };
    const used = (record: CacheRecord): void => {
      const seconds = Math.max(0, Math.floor((record.freshUntil - now()) / 1000));
      usage.freshForS = usage.freshForS === null ? seconds : Math.min(usage.freshForS, seconds);
    };

    // The key's id and generations, read once per request.
    let scope: Promise<{ keyId: string; prefix: string; lists: string } | null> | undefined;
    const scopeOf = () =>
      (scope ??= (async () => {
        if (authorization === null) return null;
        const secret = await ask('secret', () => store.secret());
        if (secret === undefined) return null;
        const keyId = createHmac('sha256', secret).update(authorization).digest('base64url').slice(0, 32);
        const [generation, lists] = await Promise.all([
          ask('counter', () => store.counter(`gen:${keyId}`)),
          ask('counter', () => store.counter(`lists:${keyId}`)),
        ]);
        if (generation === undefined || lists === undefined) return null;
        return { keyId, prefix: `c:${keyId}:${generation}`, lists: `l${lists}` };
      })());

    let accepted: Promise<void> | undefined;
    /** Before the first cached answer: has the upstream accepted this key lately? Else ask it once. */
    const ensureAccepted = (keyId: string): Promise<void> =>
      (accepted ??= (async () => {
        if (await ask('marked', () => store.marked(`seen:${keyId}`))) return;
        let pending = validating.get(keyId);
        if (pending === undefined) {
          pending = (async () => {
            try {
              await validate();
              await safely('mark', () => store.mark(`seen:${keyId}`, options.keyRecheckMs));
            } catch (error) {
              if (isRevoked(error)) await dropEntriesOf(keyId);
              // An outage says nothing about the key: the cached answer stands.
              if (!isOutage(error)) throw error;
            }
          })().finally(() => validating.delete(keyId));
          validating.set(keyId, pending);
        }
        await pending;
      })());

    async function read<T>(kind: string, key: string, lifetimeMs: number, fetch: () => Promise<T>): Promise<T> {
      const scoped = await scopeOf();
      if (scoped === null) {
        usage.misses++; // no key, or no store: straight to the upstream
        return fetch();
      }
      const fullKey = `${scoped.prefix}:${kind}:${key}`;
      const cached = await ask('get', () => store.get(fullKey));
      if (cached !== undefined && cached.freshUntil > now()) {
        await ensureAccepted(scoped.keyId);
        usage.hits++;
        used(cached);
        return cached.value as T;
      }
      // Join the call in flight for this entry, or make it. A joined call that failed because the
      // request that made it left is made again (once, and shared again): it says nothing of the upstream.
      for (let attempt = 1; ; attempt++) {
        let shared = inFlight.get(fullKey);
        const coalesced = shared !== undefined;
        if (shared === undefined) {
          let own: Promise<CacheRecord> | undefined;
          own = (async () => {
            const value = await fetch();
            const at = now();
            const record: CacheRecord = { value, freshUntil: at + lifetimeMs, staleUntil: at + lifetimeMs + options.maxStaleMs };
            // Written in the background: the answer does not wait for the store. Not when a write
            // dropped this call meanwhile (`written`): its answer may be from before the write.
            if (inFlight.get(fullKey) === own) {
              void safely('set', () => store.set(fullKey, record));
              // Says the key has entries for as long as any can live: what a 401 or a write must drop.
              void safely('mark', () => store.mark(`has:${scoped.keyId}`, options.settledMs + options.maxStaleMs));
            }
            void safely('mark', () => store.mark(`seen:${scoped.keyId}`, options.keyRecheckMs));
            return record;
          })().finally(() => {
            if (inFlight.get(fullKey) === own) inFlight.delete(fullKey);
          });
          shared = own;
          inFlight.set(fullKey, own);
        }
        try {
          const record = await shared;
          if (coalesced) usage.hits++;
          else usage.misses++;
          used(record);
          return record.value as T;
        } catch (error) {
          if (coalesced && attempt === 1 && isLeft(error)) continue;
          if (isRevoked(error)) await dropEntriesOf(scoped.keyId);
          if (cached !== undefined && isOutage(error) && cached.staleUntil > now()) {
            usage.stale++;
            usage.freshForS = 0;
            return cached.value as T;
          }
          usage.misses++; // went to the upstream (itself or with others), and was not answered
          throw error;
        }
      }
    }

    return {
      usage,
      website: (id, fetch) => read('w', id, options.recentMs, fetch),
      websitePage: async (query, fetch) => {
        const scoped = await scopeOf();
        return read(`${scoped?.lists ?? 'l'}`, websiteListKey(query), options.recentMs, fetch);
      },
      statPage: (query, fetch) => {
        const settled = query.to < dayIn(options.timeZone, now());
        return read('s', statsQueryKey(query), settled ? options.settledMs : options.recentMs, fetch);
      },
      async written(websiteId) {
        const scoped = await scopeOf();
        if (scoped === null) return;
        // A read of the website in flight may answer from before the write: later reads do not join it.
        if (websiteId !== null) inFlight.delete(`${scoped.prefix}:w:${websiteId}`);
        // A key with no entries has nothing to drop, and gets no counter in the store (unless a read
        // is in flight, which may be about to add one from before the write).
        if (inFlight.size === 0 && !(await safely('marked', () => store.marked(`has:${scoped.keyId}`)))) return;
        const [, lists] = await Promise.all([
          websiteId === null ? undefined : safely('delete', () => store.delete(`${scoped.prefix}:w:${websiteId}`)),
          safely('bump', () => store.bump(`lists:${scoped.keyId}`)),
        ]);
        // The rest of this request (a payload's `query`) reads the lists after the write, not the
        // generation it read before; if the store could not bump it, it reads from the upstream.
        scope = Promise.resolve(lists === undefined ? null : { ...scoped, lists: `l${lists}` });
      },
    };
  }

  return { forRequest, close: () => store.close() };
}

/** The same interface with nothing kept (CACHE=off): every read is a miss. */
export const NO_CACHE: ResponseCache = {
  forRequest: () => {
    const usage: CacheUsage = { hits: 0, misses: 0, stale: 0, freshForS: null };
    const miss = <T>(fetch: () => Promise<T>): Promise<T> => {
      usage.misses++;
      return fetch();
    };
    return {
      usage,
      website: (_id, fetch) => miss(fetch),
      websitePage: (_query, fetch) => miss(fetch),
      statPage: (_query, fetch) => miss(fetch),
      written: async () => undefined,
    };
  },
  close: async () => undefined,
};
