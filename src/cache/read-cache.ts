// A read cache of decoded upstream answers, per API key. A real install throttles each key (60 calls a
// minute), and most of what a dashboard reads is past days, which never change: statistics whose range
// ends before today (in the upstream's time zone) are settled and kept long; ranges that reach today,
// websites and lists are kept briefly; a write drops what it touched. Entries are found only by
// requests with the same key: the cache key holds a keyed hash (HMAC) of the key, never the key.
//
// Rules that keep it honest:
// - Revocation: a cached answer, fresh or stale, is given only while the upstream has accepted the
//   key within `keyRecheckMs` (its `seen` mark); past that, one upstream call re-validates it first,
//   whose verdict every request waiting on it gets (an outage included: no answer from the cache
//   then), and a 401 drops the key's entries. A call cancelled because its client left is no verdict
//   and no outage: who waited on it makes it again.
// - Stale on failure: when the upstream cannot answer (429, 5xx, timeout, open breaker), an entry up
//   to `maxStaleMs` past its lifetime answers instead, flagged stale.
// - Coalescing: concurrent identical reads with the same key share one upstream call, whichever
//   requests they came from.
// - Nothing read before a write or a revocation is stored after it: the store checks the key's
//   counters as the request read them, in the same step as the write (store.ts), on any gateway.
// - An entry with an owner check (a page of statistics: the same request's read of its website with
//   the same key) is stored only once that succeeded.
// - A store that fails or is slow never fails a request: the read goes to the upstream.
// The cache knows nothing of what it holds: a read comes with its kind, its key (keys.ts), its
// lifetime and what drops it (source.ts says which, for each read).
//
// The parts: a request's scope, its key's generation and writes counter (scope.ts); the key's
// marks (marks.ts); records, their freshness and their storing (storing.ts); waiting on the
// store and on shared calls (waiting.ts). This module reads, re-checks keys and drops with them.
import { onOff, seconds } from '../settings.js';
import { KeyMarks, RequestMarks } from './marks.js';
import { type StoreSession, type Scope, readScope, scopeWith } from './scope.js';
import type { CacheRecord, CacheStore } from './store.js';
import { freshEnough, keep, recordOf } from './storing.js';
import type { UnsettledWrites } from './unsettled.js';
import { Abandoned, type StoreCall, joinOrMake, safeStore, withinBudget } from './waiting.js';
import { isKeyRevoked, mayAnswerStale } from '../errors.js';
import { storeNames } from './keys.js';

/** The lifetimes and bounds of cached answers; config.ts reads them from the environment in seconds. */
export interface CacheLifetimes {
  /** Lifetime of what never changes again: statistics whose range ends before today (CACHE_TTL_SETTLED_S; default a day). */
  settledMs: number;
  /** Lifetime of everything else (CACHE_TTL_RECENT_S; default 60 s). */
  recentMs: number;
  /** How long past its lifetime an entry may answer when the upstream cannot (CACHE_MAX_STALE_S; default 10 min). */
  maxStaleMs: number;
  /** How recently the upstream must have accepted a key for its cached answers to be given (KEY_RECHECK_S; default 60 s). */
  keyRecheckMs: number;
}

/** Whether the read cache is on, and how long what it keeps may answer. */
export const CACHE_SETTINGS = {
  enabled: onOff('CACHE', { fallback: true, doc: 'off turns the read cache off' }),
  settledMs: seconds('CACHE_TTL_SETTLED_S', {
    fallbackMs: 86_400_000,
    min: 0,
    max: 31_536_000,
    doc: 'lifetime of settled statistics (their range ends before today)',
  }),
  recentMs: seconds('CACHE_TTL_RECENT_S', {
    fallbackMs: 60_000,
    min: 0,
    max: 86_400,
    doc: 'lifetime of everything else: statistics that reach today, websites, lists',
  }),
  maxStaleMs: seconds('CACHE_MAX_STALE_S', {
    fallbackMs: 600_000,
    min: 0,
    max: 604_800,
    doc: 'how long past its lifetime an entry may answer when the install cannot',
  }),
  keyRecheckMs: seconds('KEY_RECHECK_S', {
    fallbackMs: 60_000,
    min: 1,
    max: 86_400,
    doc: 'cached answers are given only while the install accepted the key this recently',
  }),
};

export interface CacheOptions extends CacheLifetimes {
  store: CacheStore;
  now?: () => number;
  /** Told when the store fails (the read then goes to the upstream). */
  onStoreError?: (operation: string, error: unknown) => void;
  /** Called at each read with what it was (the figures of usage, for all requests: metrics). */
  onRead?: (result: 'hit' | 'miss' | 'stale') => void;
  /**
   * How long one request may wait for the store in all (CACHE_STORE_TIMEOUT_MS), counting only the time
   * its store calls are unanswered (waiting.ts): past it, the rest of its reads go to the upstream.
   * What is stored after the answer is not counted (each call is bounded by the store itself).
   */
  storeBudgetMs?: number;
  /**
   * The keys with an invalidation pending after a write the store could not take (unsettled.ts): their reads go
   * past the store until Redis has it. Shared with the stored answers (cache/stored-answers.ts).
   */
  unsettled?: UnsettledWrites;
}

/** What the read cache did for a read: answered it (hit), from a stale entry, not at all (miss), by a call in flight (coalesced), or kept what it read (written). */
export const CACHE_OUTCOMES = ['hit', 'stale', 'miss', 'coalesced', 'written'] as const;
export type CacheOutcome = (typeof CACHE_OUTCOMES)[number];

/** What one request's reads did with the cache: for `extensions.cache`, the log and Cache-Control. */
export interface CacheUsage {
  hits: number;
  misses: number;
  stale: number;
  /** Seconds the answer stays fresh: the shortest remaining lifetime of what it used; null when nothing. */
  freshForS: number | null;
}

/** One read through the cache: what it is, how long its answer stays true, and what drops it sooner. */
export interface CachedRead {
  /** What is read (keys.ts's ENTRY_KINDS) and its key (keys.ts): the entry's name, with the API key's. */
  kind: string;
  key: string;
  /** `settled`: it never changes again (CacheLifetimes.settledMs); `recent`: it may (recentMs). */
  lifetime: 'settled' | 'recent';
  /**
   * What writes made with the key do to it. `any`: every write drops it (a list: its name holds the
   * key's writes counter, which a write moves on). `own`: a write of it drops it (`written`), and it
   * is not stored once any write has happened since its read began (one object, which a list's answer
   * may also have changed). `none`: only a revocation drops it before its lifetime ends.
   */
  droppedByWrites: 'any' | 'own' | 'none';
  /**
   * Stored only once this succeeds: a page of statistics, once the same request's read of its website
   * did, since some installs serve any website's statistics to any key.
   */
  owned?: () => Promise<unknown>;
}

/** The reads a request makes, through the cache. */
export interface RequestCache {
  /**
   * `fetch` through the cache. `entry` says what it reads; it is called only when there is a cache to
   * keep it in (not with CACHE=off, nor for a request without a key), which spares its key's making.
   * `seen`, when given, is told what the cache did for it (a traced request: upstream/request-trace.ts).
   */
  read<T>(entry: () => CachedRead, fetch: () => Promise<T>, seen?: (outcome: CacheOutcome) => void): Promise<T>;
  /** After a write with the key: drop `entry` (the object written, if there is one) and every entry dropped by any write. */
  written(entry: Pick<CachedRead, 'kind' | 'key'> | null): Promise<void>;
  /**
   * The upstream refused a write made with this key (401): its entries go, as on a read's 401, and
   * nothing is written to the store for a key that has none (a made-up key).
   */
  refused(): Promise<void>;
  /** The upstream answered a write made with this key with a success (reads through the cache count by themselves). */
  answered(): void;
  /**
   * Whether the upstream accepted this key lately: in this request, or by its `seen` mark (within
   * KEY_RECHECK_S, on any gateway on the store). A store that cannot say: not lately.
   */
  acceptedLately(): Promise<boolean>;
  /**
   * Resolves once the upstream accepted the key: in this request, by its `seen` mark (within KEY_RECHECK_S,
   * on any gateway on the store), or by `validate` (one call, shared with the requests re-checking it);
   * throws what the upstream answered otherwise (UNAUTHENTICATED for a key it refused).
   */
  checkKey(): Promise<void>;
  readonly usage: CacheUsage;
  /**
   * True once, in this request, the upstream answered this key with a success, or the key's `seen`
   * mark (the upstream accepted it within KEY_RECHECK_S) was found. A method, not a getter: an object
   * literal with an accessor is kept by V8 in dictionary mode, and one made per request keeps every
   * young object of its request alive through young collections (docs/performance.md#garbage).
   */
  keyAccepted(): boolean;
}

/**
 * What a request accepts from the cache beyond its lifetimes: a live dashboard's poll takes a `recent`
 * entry (today's figures, a website) only if it was read from the upstream within `recentMaxAgeMs`, so
 * that each poll sees today as it is, while polls made at the same moment (another document of the
 * key) still share one read.
 */
export interface Freshness {
  recentMaxAgeMs: number;
}

/** What a key's re-check found, given to every request that waited on it. */
type Verdict = { accepted: true } | { accepted: false; error: unknown; abandoned: boolean };

export interface ReadCache {
  /**
   * The cache of one request made with `authorization`; `validate` is one cheap upstream read, and
   * `signal` is aborted when the request's client goes away (its calls are then cancelled). `session`:
   * the store's part of the request, as its stored-answer lookup left it (budget spent, the key's counters).
   */
  forRequest(
    authorization: string | null,
    validate: () => Promise<unknown>,
    signal?: AbortSignal,
    freshness?: Freshness,
    session?: StoreSession,
  ): RequestCache;
  close(): Promise<void>;
}

export function createReadCache(options: CacheOptions): ReadCache {
  const { store } = options;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, Promise<CacheRecord>>();
  /** Reads of each key (by its id) in flight here: a write with a key that has none may need no counter. */
  const readsOf = new Map<string, number>();
  const validating = new Map<string, Promise<Verdict>>();
  const abandoned = new Abandoned();
  const safely = safeStore(options.onStoreError);
  /** How long any entry can live, stale included: the key's counters live at least as long. */
  const entryLifeMs = options.settledMs + options.maxStaleMs;
  const marks = new KeyMarks(store, safely, options.keyRecheckMs, entryLifeMs);

  function forRequest(
    authorization: string | null,
    validate: () => Promise<unknown>,
    signal?: AbortSignal,
    freshness?: Freshness,
    session?: StoreSession,
  ): RequestCache {
    const usage: CacheUsage = { hits: 0, misses: 0, stale: 0, freshForS: null };
    const counted = (result: 'hit' | 'miss' | 'stale'): void => {
      if (result === 'hit') usage.hits++;
      else if (result === 'miss') usage.misses++;
      else usage.stale++;
      options.onRead?.(result);
    };
    let keyAccepted = false;
    const once = new RequestMarks(marks);
    /** This request's client went away: its calls were cancelled, and their failures mean nothing. */
    const left = (): boolean => signal?.aborted === true;
    /**
     * A store read on the request's path, within what is left of its budget (the stored answers' lookup
     * spent some of it); undefined past it.
     */
    const ask = withinBudget(safely, options.storeBudgetMs, session?.use);
    const used = (record: CacheRecord): void => {
      const seconds = Math.max(0, Math.floor((record.freshUntil - now()) / 1000));
      usage.freshForS = usage.freshForS === null ? seconds : Math.min(usage.freshForS, seconds);
    };

    // The lookup read the key's counters already: one round trip less.
    const found = authorization === null ? undefined : session?.scope;
    let scope: Promise<Scope | null> | undefined = found && Promise.resolve(scopeWith(found.keyId, found.generation, found.lists));
    const scopeOf = () => (scope ??= readScope(store, ask, authorization));

    let seenMark: Promise<boolean> | undefined;
    /**
     * Has the upstream accepted this key within KEY_RECHECK_S: in this request, or by its `seen` mark?
     * Before a cached answer the store is asked within the request's budget; after a failed upstream
     * call (which may have outlasted it: a timeout) within the store's own timeout.
     */
    const acceptedLately = async (keyId: string, lookup: StoreCall = ask): Promise<boolean> => {
      if (keyAccepted) return true;
      seenMark ??= marks.wasSeen(keyId, lookup);
      if (await seenMark) keyAccepted = true;
      return keyAccepted;
    };

    /** One upstream call that re-validates the key, made for every request that waits on it. */
    async function recheck(keyId: string): Promise<Verdict> {
      try {
        await validate();
        void marks.seen(keyId);
        return { accepted: true };
      } catch (error) {
        if (left()) return { accepted: false, error, abandoned: true };
        if (isKeyRevoked(error)) await marks.dropEntriesOf(keyId);
        return { accepted: false, error, abandoned: false };
      }
    }

    let accepted: Promise<void> | undefined;
    /**
     * Before the first cached answer: has the upstream accepted this key lately? Else ask it once, or
     * wait for the re-check another request is making. Its verdict stands for every request that
     * waited on it, an outage included (the key then gets no cached answer: nothing says it is still
     * valid); only a re-check cancelled because its own client left is made again.
     */
    const ensureAccepted = (keyId: string): Promise<void> =>
      (accepted ??= (async () => {
        if (await acceptedLately(keyId)) return;
        for (;;) {
          const { call, joined } = joinOrMake(validating, keyId, () => recheck(keyId));
          const verdict = await call;
          if (verdict.accepted) {
            keyAccepted = true;
            return;
          }
          if (joined && verdict.abandoned && !left()) continue;
          throw verdict.error;
        }
      })());

    async function read<T>(entryOf: () => CachedRead, fetch: () => Promise<T>, seen?: (outcome: CacheOutcome) => void): Promise<T> {
      // A key with an invalidation pending (a write the store did not take) reads past the store until Redis has it.
      const owed = (): boolean => authorization !== null && options.unsettled?.owes(authorization) === true;
      const pastTheStore = async (): Promise<T> => {
        counted('miss'); // no key, no store, or a drop owed: straight to the upstream
        seen?.('miss');
        const value = await fetch();
        keyAccepted = true;
        return value;
      };
      const scoped = owed() ? null : await scopeOf();
      if (scoped === null) return pastTheStore();
      const entry = entryOf();
      const lifetimeMs = entry.lifetime === 'settled' ? options.settledMs : options.recentMs;
      const name = scoped.entryName(entry.kind, entry.key, entry.droppedByWrites);
      const cached = await ask('get', () => store.get(name));
      // A call sent while the connection was being made again is answered once it is ready: not to be
      // trusted then (unsettled.ts).
      if (owed()) return pastTheStore();
      if (cached !== undefined && freshEnough(cached, now(), { lifetime: entry.lifetime, lifetimeMs }, freshness?.recentMaxAgeMs)) {
        await ensureAccepted(scoped.keyId);
        counted('hit');
        seen?.('hit');
        used(cached);
        return cached.value as T;
      }
      // Join the call in flight for this entry, or make it. A joined call cancelled because the
      // request that made it left is made again (and shared again): it says nothing of the upstream.
      let kept = false;
      const { keyId } = scoped;
      const fetchAndKeep = async (current: () => boolean): Promise<CacheRecord> => {
        let value: T;
        readsOf.set(keyId, (readsOf.get(keyId) ?? 0) + 1);
        try {
          value = await fetch();
        } catch (error) {
          if (left()) abandoned.add(error); // for who joined it
          throw error;
        } finally {
          const reads = (readsOf.get(keyId) ?? 1) - 1;
          if (reads === 0) readsOf.delete(keyId);
          else readsOf.set(keyId, reads);
        }
        const record = recordOf(value, now(), lifetimeMs, options.maxStaleMs);
        // Not when a write in this process dropped this call meanwhile (`written`): its answer may
        // be from before the write. A write through another gateway is the store's guard's to catch.
        if (current()) {
          const guard = entry.droppedByWrites === 'none' ? scoped.guard : scoped.listsGuard;
          kept = true;
          void keep(store, safely, once, scoped.keyId, name, record, guard, entry.owned);
        }
        void once.seen(scoped.keyId);
        return record;
      };
      for (;;) {
        const { call, joined } = joinOrMake(inFlight, name, fetchAndKeep);
        try {
          const record = await call;
          keyAccepted = true;
          counted(joined ? 'hit' : 'miss');
          seen?.(joined ? 'coalesced' : kept ? 'written' : 'miss');
          used(record);
          return record.value as T;
        } catch (error) {
          if (joined && !left() && abandoned.has(error)) continue;
          if (isKeyRevoked(error)) await marks.dropEntriesOf(scoped.keyId);
          // Stale only for a key the upstream accepted within KEY_RECHECK_S: an outage says nothing
          // of the key, and a longer one must not serve a revoked key for ever.
          if (
            cached !== undefined &&
            !left() &&
            mayAnswerStale(error) &&
            cached.staleUntil > now() &&
            (await acceptedLately(scoped.keyId, safely))
          ) {
            counted('stale');
            seen?.('stale');
            usage.freshForS = 0;
            return cached.value as T;
          }
          counted('miss'); // went to the upstream (itself or with others), and was not answered
          seen?.(joined ? 'coalesced' : 'miss');
          throw error;
        }
      }
    }

    return {
      usage,
      keyAccepted: () => keyAccepted,
      read,
      answered() {
        keyAccepted = true;
        void scopeOf().then((scoped) => scoped && once.seen(scoped.keyId));
      },
      async acceptedLately() {
        if (keyAccepted) return true;
        const scoped = await scopeOf();
        return scoped !== null && acceptedLately(scoped.keyId, safely);
      },
      async checkKey() {
        if (keyAccepted) return;
        const scoped = await scopeOf();
        if (scoped !== null) return ensureAccepted(scoped.keyId);
        await validate();
        keyAccepted = true;
      },
      async refused() {
        const scoped = authorization === null ? null : await scopeOf();
        if (scoped !== null) await marks.dropEntriesOf(scoped.keyId);
      },
      async written(entry) {
        if (authorization === null) return;
        const scoped = await scopeOf();
        if (scoped === null) return keepPending();
        const written = entry === null ? null : scoped.entryName(entry.kind, entry.key);
        // A read of the object in flight may answer from before the write: later reads do not join it.
        if (written !== null) inFlight.delete(written);
        // A key with no entries has nothing to drop, and gets no counter in the store; unless a read
        // of it is in flight here, or the upstream accepted the key (a read of it may be in flight on
        // another gateway): either may be about to store what it read before the write. Another key's
        // reads say nothing of this one. A store that cannot say: as if it had some.
        if (!keyAccepted && !readsOf.has(scoped.keyId) && (await marks.mayHaveEntries(scoped.keyId, ask)) === false) return;
        // The counter first, then the delete: a read from before the write that stores its record after the
        // bump is refused by its guard, and one that stored it before is deleted. (Both at once, a record
        // stored between the delete and the bump would outlive the write.) Within the request's budget:
        // what the store does not take in time stays pending, and is sent again until Redis has it (unsettled.ts).
        const lists = await ask('bump', () => store.bump(storeNames.writes(scoped.keyId), entryLifeMs));
        const deleted = written === null || (await ask('delete', () => store.delete(written).then(() => true))) === true;
        if (lists === undefined || !deleted) return keepPending();
        // The rest of this request (a payload's `query`) reads the lists after the write, not the
        // generation it read before.
        scope = Promise.resolve(scopeWith(scoped.keyId, scoped.generation, lists));
      },
    };

    /** The store did not take a write's invalidation: the key reads past it until Redis has it (this request too). */
    function keepPending(): void {
      if (authorization !== null) options.unsettled?.pend(authorization);
      scope = Promise.resolve(null);
    }
  }

  return {
    forRequest,
    close: () => {
      options.unsettled?.close();
      return store.close();
    },
  };
}

/** The same interface with nothing kept (CACHE=off): every read is a miss. */
export const NO_CACHE: ReadCache = {
  forRequest: (_authorization, validate) => {
    const usage: CacheUsage = { hits: 0, misses: 0, stale: 0, freshForS: null };
    let keyAccepted = false;
    const miss = async <T>(fetch: () => Promise<T>): Promise<T> => {
      usage.misses++;
      const value = await fetch();
      keyAccepted = true;
      return value;
    };
    return {
      usage,
      keyAccepted: () => keyAccepted,
      read: (_entry, fetch) => miss(fetch),
      written: async () => undefined,
      refused: async () => undefined,
      answered() {
        keyAccepted = true;
      },
      acceptedLately: async () => keyAccepted,
      async checkKey() {
        if (keyAccepted) return;
        await validate();
        keyAccepted = true;
      },
    };
  },
  close: async () => undefined,
};
