// The read cache: decoded upstream answers per API key, under docs/caching.md's rules. It knows nothing of
// what it holds: a read comes with its kind, key, lifetime and what drops it (source.ts). Its parts: scope.ts,
// marks.ts, storing.ts, waiting.ts; this module reads, re-checks keys and drops with them.
import { type SettingsOf, onOff, seconds } from '../settings.js';
import { MemoryCacheStore } from './memory-store.js';
import { KeyMarks } from './marks.js';
import { type StoreSession, type Scope, readScope, scopeWith } from './scope.js';
import type { CacheRecord, CacheStore } from './store.js';
import { freshEnough, keep, recordOf } from './storing.js';
import type { UnsettledWrites } from './unsettled.js';
import { Abandoned, type StoreCall, joinOrMake, safeStore, withinBudget } from './waiting.js';
import { isKeyRevoked, mayAnswerStale } from '../errors.js';
import { storeNames } from './keys.js';

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

export interface CacheOptions extends Omit<SettingsOf<typeof CACHE_SETTINGS>, 'enabled'> {
  store: CacheStore;
  now?: () => number;
  /** Told when the store fails (the read then goes to the upstream). */
  onStoreError?: (operation: string, error: unknown) => void;
  /** Told of each read (metrics). */
  onRead?: (result: 'hit' | 'miss' | 'stale') => void;
  /** How long one request may wait for the store in all (CACHE_STORE_TIMEOUT_MS; waiting.ts). */
  storeBudgetMs?: number;
  /** The keys whose reads go past the store until it took their write's drop (unsettled.ts). */
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
  /** `settled`: it never changes again (settledMs); `recent`: it may (recentMs). */
  lifetime: 'settled' | 'recent';
  /**
   * What writes with the key do to it. `any`: every write drops it (its name holds the writes counter). `own`:
   * a write of it drops it, and none may have happened since its read began. `none`: only a revocation does.
   */
  droppedByWrites: 'any' | 'own' | 'none';
  /** Stored only once this succeeds: some installs serve any website's statistics to any key. */
  owned?: () => Promise<unknown>;
}

/** The reads a request makes, through the cache. */
export interface RequestCache {
  /** `fetch` through the cache; `entry` (made only if there is a cache) says what it reads, `seen` is told what it did. */
  read<T>(entry: () => CachedRead, fetch: () => Promise<T>, seen?: (outcome: CacheOutcome) => void): Promise<T>;
  /** After a write with the key: drop `entry` (the object written, if any) and every entry any write drops. */
  written(entry: Pick<CachedRead, 'kind' | 'key'> | null): Promise<void>;
  /** The upstream refused a write made with this key (401): its entries go, as on a read's 401. */
  refused(): Promise<void>;
  /** The upstream answered a write made with this key with a success. */
  answered(): void;
  /** Whether the upstream accepted this key lately: in this request, or by its `seen` mark (KEY_RECHECK_S). */
  acceptedLately(): Promise<boolean>;
  /** Resolves once the key was accepted lately or by `validate` (one call, shared); throws what the upstream answered. */
  checkKey(): Promise<void>;
  readonly usage: CacheUsage;
  /** The key was accepted in this request, or its `seen` mark found. A method: a getter puts V8 in dictionary mode. */
  keyAccepted(): boolean;
}

/** Beyond its lifetimes: a live poll takes a `recent` entry only if read within `recentMaxAgeMs` (today as it is). */
export interface Freshness {
  recentMaxAgeMs: number;
}

/** What a key's re-check found, given to every request that waited on it. */
type Verdict = { accepted: true } | { accepted: false; error: unknown; abandoned: boolean };

export interface ReadCache {
  /** The cache of one request made with `authorization`; `validate` is one cheap upstream read. */
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

  const forRequest: ReadCache['forRequest'] = (authorization, validate, signal, freshness, session) => {
    const usage: CacheUsage = { hits: 0, misses: 0, stale: 0, freshForS: null };
    const counted = (result: 'hit' | 'miss' | 'stale'): void => {
      if (result === 'hit') usage.hits++;
      else if (result === 'miss') usage.misses++;
      else usage.stale++;
      options.onRead?.(result);
    };
    let keyAccepted = false;
    let seenSaid: Promise<void> | undefined;
    let entriesSaid: Promise<void> | undefined;
    /** The key's marks as this request sets them: each at most once, not once a read. */
    const once = {
      seen: (keyId: string) => (seenSaid ??= marks.seen(keyId)),
      willHaveEntries: (keyId: string) => (entriesSaid ??= marks.willHaveEntries(keyId)),
    };
    /** This request's client went away: its calls were cancelled, and their failures mean nothing. */
    const left = (): boolean => signal?.aborted === true;
    /** A store call within what is left of the request's budget; undefined past it. */
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
    /** Accepted within KEY_RECHECK_S? `lookup`: within the request's budget, or not (after an upstream call outlasted it). */
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
    /** Accepted lately, or by a re-check made or joined, whose verdict stands unless its own client left. */
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
      const owed = (): boolean => authorization !== null && options.unsettled?.owes(authorization) === true;
      const pastTheStore = async (): Promise<T> => {
        counted('miss'); // no key, no store, or a drop owed: straight to the upstream
        seen?.('miss');
        const value = await fetch();
        keyAccepted = true;
        return value;
      };
      const scoped = authorization === null || owed() ? null : await scopeOf();
      if (scoped === null) return pastTheStore();
      const entry = entryOf();
      const lifetimeMs = entry.lifetime === 'settled' ? options.settledMs : options.recentMs;
      const name = scoped.entryName(entry.kind, entry.key, entry.droppedByWrites);
      const cached = await ask('get', () => store.get(name));
      // A call sent while the connection was made again is answered once it is ready: not to be trusted then.
      if (owed()) return pastTheStore();
      if (cached !== undefined && freshEnough(cached, now(), { lifetime: entry.lifetime, lifetimeMs }, freshness?.recentMaxAgeMs)) {
        await ensureAccepted(scoped.keyId);
        counted('hit');
        seen?.('hit');
        used(cached);
        return cached.value as T;
      }
      // Join the call in flight for this entry, or make it (again, when the request that made it left).
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
        // Not when a write here dropped this call meanwhile (another gateway's is the store's guard's to catch).
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
          // Stale only for a key accepted within KEY_RECHECK_S: a long outage must not serve a revoked key for ever.
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
        // No counter for a key with no entries, unless a read here or on another gateway (an accepted key) may store.
        if (!keyAccepted && !readsOf.has(scoped.keyId) && (await marks.mayHaveEntries(scoped.keyId, ask)) === false) return;
        // The counter first, then the delete: a record stored after the bump is refused by its guard, one
        // stored before is deleted. What the store does not take in time stays pending (unsettled.ts).
        const lists = await ask('bump', () => store.bump(storeNames.writes(scoped.keyId), entryLifeMs));
        const deleted = written === null || (await ask('delete', () => store.delete(written).then(() => true))) === true;
        if (lists === undefined || !deleted) return keepPending();
        // The rest of this request (a payload's `query`) reads the lists after the write.
        scope = Promise.resolve(scopeWith(scoped.keyId, scoped.generation, lists));
      },
    };

    /** The store did not take a write's drop: the key reads past it until it has (this request too). */
    function keepPending(): void {
      if (authorization !== null) options.unsettled?.pend(authorization);
      scope = Promise.resolve(null);
    }
  };

  return {
    forRequest,
    close: () => {
      options.unsettled?.close();
      return store.close();
    },
  };
}

/** Nothing kept (CACHE=off): every read is a miss, as for a request without a key. */
const OFF = createReadCache({ store: new MemoryCacheStore(0), settledMs: 0, recentMs: 0, maxStaleMs: 0, keyRecheckMs: 0 });
export const NO_CACHE: ReadCache = {
  forRequest: (_authorization, validate, signal) => OFF.forRequest(null, validate, signal),
  close: async () => undefined,
};
