// One upstream data source per GraphQL request, and the resolvers' only way to the upstream (as
// Apollo's RESTDataSource is): every read (a website, a page of websites, a page of a statistic, every
// page of a statistic), every write, and what a write invalidates, in this request's loaders and in the
// shared read cache. Its calls carry the caller's key, go out at most `maxConcurrency` at a time, stop
// when the caller goes away, and end by the request's deadline. Adding an upstream call: a decoder
// (wire.ts), an api function (api.ts) and one method here.
//
// Reads are deduplicated per request with DataLoader. The upstream has no batch endpoints, so
// "batching" means deduplication: every distinct read happens once per request and concurrent loads of
// the same key share one promise. Then they go through the read cache (read-cache.ts), which may answer
// without the upstream. Nothing here outlives the request, so nothing read with one key can answer
// another.
import DataLoader from 'dataloader';
import { dayIn, type Clock } from '../analytics/calendar.js';
import type { Deletion, Page, RateLimit, Stat, StatsQuery, Website, WebsiteListQuery, WebsiteWrite } from '../domain.js';
import { GatewayError, isKeyRevoked } from '../errors.js';
import { integer } from '../settings.js';
import { destroyWebsite, fetchStatPage, fetchWebsite, fetchWebsitePage, patchWebsite, storeWebsite, type Send } from './api.js';
import type { CachedRead, CacheUsage, Freshness, ReadCache } from '../cache/read-cache.js';
import type { StoreSession } from '../cache/scope.js';
import type { UpstreamClient } from './client.js';
import { concurrencyLimit } from './concurrency.js';
import { installAnswered, wasWriteRefused } from './errors.js';
import type { StatNames } from './dialect.js';
import { ENTRY_KINDS, statsQueryKey, websiteListKey } from '../cache/keys.js';
import type { CallShape, FieldPath, RequestTrace, TracedRead } from './request-trace.js';

/** What outlives a request: the client, what the gateway has learnt of the upstream, the read cache, the clock. */
export interface Upstream {
  client: UpstreamClient;
  statNames: StatNames;
  cache: ReadCache;
  /** "Now" and the upstream's time zone: which statistics are settled (and the periods of the schema). */
  clock: Clock;
}

/** What bounds one request's upstream calls; config.ts reads them from the environment. */
export interface RequestBounds {
  /** Upstream calls one GraphQL request may have in flight at once (MAX_CONCURRENCY; default 8). */
  maxConcurrency: number;
  /** Overall budget of one GraphQL request, retries included (REQUEST_DEADLINE_MS; default 20 s). */
  requestDeadlineMs: number;
}

/** What bounds one request's upstream calls. */
export const REQUEST_BOUNDS_SETTINGS = {
  maxConcurrency: integer('MAX_CONCURRENCY', {
    fallback: 8,
    min: 1,
    max: 256,
    unit: 'calls',
    doc: 'upstream calls one GraphQL request may have in flight at once',
  }),
  requestDeadlineMs: integer('REQUEST_DEADLINE_MS', {
    fallback: 20_000,
    min: 1,
    max: 600_000,
    unit: 'ms',
    doc: 'overall budget of one GraphQL request, retries included',
  }),
};

/** What one request's upstream calls did: for `extensions`, the log and Cache-Control. */
export interface UpstreamUsage {
  /** Upstream calls made for this request (retries not counted). */
  upstreamCalls: number;
  /** What the upstream's latest answer said of the key's rate limit; null when it said nothing. */
  rateLimit: RateLimit | null;
  /** What the reads did with the cache (the request cache's own object, set by createSource). */
  cache: CacheUsage;
}

export interface SourceRequest {
  /** The caller's Authorization header to forward, or why there is none fit to forward (every call is then refused with it). */
  credentials: { authorization: string } | { problem: string };
  /** Aborted when the caller goes away: its calls in flight stop, and so do their retries. */
  signal: AbortSignal;
  /** Date.now() value by which every call of the request, retries included, must be over. */
  deadline: number;
  maxConcurrency: number;
  /** Counted into as calls are made (shared with the context, which reports it). */
  usage: UpstreamUsage;
  /** What the request accepts from the cache beyond its lifetimes (a live poll: today fresh). */
  freshness?: Freshness;
  /** The store's part of the request, as its stored-answer lookup left it, before GraphQL ran. */
  store?: StoreSession;
  /** Where its calls and reads are recorded, when it asked for a trace (X-Gateway-Trace). */
  trace?: RequestTrace;
}

/** Rows a page when every page of a statistic is read (the most the upstream allows). */
export const ROWS_PER_PAGE = 100;

/** The pages of 100 rows that `rows` rows fill; an empty list still has its first page. */
export const pagesOf = (rows: number): number => Math.max(1, Math.ceil(rows / ROWS_PER_PAGE));

/** How far a read of every page of a statistic may go. */
export interface PageBound {
  /** The most pages read: what the field reading them declares in its cost. */
  pages: number;
  /** The most rows the statistic can have over its range: past the pages they fill, the upstream is not believed. */
  rows: number | null;
}

/**
 * Every method takes, last, what asks for it: the field's resolve info (its `path`), which a traced
 * request's trace names beside the call (upstream/request-trace.ts); nothing is done with it otherwise.
 */
type AskedBy = { readonly path: FieldPath } | undefined;

export interface UpstreamSource {
  /** A website of the caller's; NOT_FOUND for an unknown id or another user's website. */
  website(id: string, by?: AskedBy): Promise<Website>;
  /** A page of the caller's websites; each also answers later reads of its id in this request. */
  websitePage(query: WebsiteListQuery, by?: AskedBy): Promise<Page<Website>>;
  /** A page of a statistic, cached only once this request has read its website (the upstream may serve anyone's). */
  statPage(query: StatsQuery, by?: AskedBy): Promise<Page<Stat>>;
  /**
   * Every row of a statistic, 100 a page, never more than `bound.pages` pages: the upstream is trusted no
   * further than the field's declared cost. The pages known (the first, or the `knownPages` the caller
   * knows of) are read at once; then as many as they say there are, in parallel; then on while a last
   * page says another follows (a page without paging numbers says so when it is full).
   */
  everyStatRow(query: Omit<StatsQuery, 'page' | 'perPage'>, bound: PageBound, knownPages?: number, by?: AskedBy): Promise<Stat[]>;
  /** `write.domain` must be normalised as the upstream stores it, so that it can be found again. */
  createWebsite(write: WebsiteWrite, by?: AskedBy): Promise<Website>;
  updateWebsite(id: string, write: WebsiteWrite, by?: AskedBy): Promise<Website>;
  deleteWebsite(id: string, by?: AskedBy): Promise<Deletion>;
  /** Whether the request records a trace: a field answered by what another started (the look-ahead) says it needed it. */
  readonly traced: boolean;
  /**
   * True once, in this request, the upstream answered the key with a success, or the key's `seen` mark
   * (the upstream accepted it within KEY_RECHECK_S) was found: the APQ registration asks. A method, as
   * the request cache's (no accessor on an object made per request: docs/performance.md#garbage).
   */
  keyAccepted(): boolean;
  /**
   * Resolves once the upstream accepted the key lately (this request, its `seen` mark, or one cheap read
   * made now); throws what it answered otherwise (UNAUTHENTICATED for a key it refused). A live stream of
   * a key not known proves it so before it takes a stream's place.
   */
  checkKey(): Promise<void>;
}

// With no batch endpoint there is nothing to gain from waiting a tick to collect keys, so each load
// is dispatched at once (batch: false) and the cache does the deduplication. A failure is returned
// as a value, not thrown: DataLoader drops the cache entry of a rejected batch, which would let a
// second field send the same failing read again.
function perKey<K, V, C = K>(load: (key: K) => Promise<V>, cacheKeyFn?: (key: K) => C): DataLoader<K, V, C> {
  return new DataLoader<K, V, C>(
    async ([key]) => {
      try {
        return [await load(key as K)];
      } catch (error) {
        return [error instanceof Error ? error : new Error(String(error))];
      }
    },
    {
      batch: false,
      ...(cacheKeyFn ? { cacheKeyFn } : {}),
    },
  );
}

export function createSource(upstream: Upstream, request: SourceRequest): UpstreamSource {
  const { client, statNames, clock } = upstream;
  const { credentials, deadline, usage } = request;
  const limit = concurrencyLimit(request.maxConcurrency);
  const onRateLimit = (rateLimit: RateLimit): void => {
    usage.rateLimit = rateLimit;
  };
  // Aborted when the caller goes away: made at the first upstream call, one listener on the request's
  // signal (yoga's, behind a proxy) however many calls follow. The deadline needs no signal: the client
  // gives each attempt only the time left (undici's header and body timeouts) and starts no attempt
  // or retry after it (cheaper than AbortSignal.any and a timer every request).
  let calls: AbortController | undefined;
  const callerGone = (): AbortSignal => {
    if (calls) return calls.signal;
    const controller = (calls = new AbortController());
    const { signal } = request;
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    return controller.signal;
  };

  const { trace } = request;
  /** Sends a call of the request; a traced request's is recorded, for `read` (none: a write's, or `note`'s). */
  const sendFor =
    (read: TracedRead | null, note?: string): Send =>
    (call) => {
      if ('problem' in credentials) return Promise.reject(new GatewayError('UNAUTHENTICATED', credentials.problem));
      const { authorization } = credentials;
      return limit(() => {
        usage.upstreamCalls++;
        const { method, path, query, form, notFoundMessage } = call;
        const observer = trace?.call(read, call, note);
        const sent = client.send({
          method,
          path,
          query,
          form,
          notFoundMessage,
          authorization,
          signal: callerGone(),
          deadline,
          onRateLimit,
          observer,
        });
        // Reads go through the cache, which sees their answers; a write's success tells it the key is accepted.
        if (method === 'GET') return sent;
        return sent.then((response) => {
          cache.answered();
          return response;
        });
      });
    };
  const send = sendFor(null);

  // Re-validating a key costs the cheapest read there is: the first page of its websites.
  const validate = () => fetchWebsitePage(trace ? sendFor(null, 'key check') : send, { sortBy: 'id', sort: 'desc', perPage: 10, page: 1 });
  const cache = upstream.cache.forRequest(
    'problem' in credentials ? null : credentials.authorization,
    validate,
    request.signal,
    request.freshness,
    request.store,
  );
  usage.cache = cache.usage;

  /**
   * `fetch` through the cache. A traced request records what the cache did and the calls made for it,
   * under `readId`'s (made only then); a read answered without a call is described by the call `fetch` would send.
   */
  function read<T>(readId: () => string, entry: () => CachedRead, fetch: (send: Send) => Promise<T>): Promise<T> {
    if (trace === undefined) return cache.read(entry, () => fetch(send));
    return trace.read(
      readId(),
      (traced, seen) => cache.read(entry, () => fetch(sendFor(traced)), seen),
      () => described(fetch),
    );
  }

  const website = perKey((id: string) =>
    read(
      () => readIds.website(id),
      () => ({ kind: ENTRY_KINDS.website, key: id, lifetime: 'recent', droppedByWrites: 'own' }),
      (send) => fetchWebsite(send, id),
    ),
  );
  /** Makes a website read elsewhere (a list, a write) answer later loads of its id. */
  const prime = (site: Website): void => {
    website.clear(site.id).prime(site.id, site);
  };
  const websitePage = perKey(async (query: WebsiteListQuery) => {
    const page = await read(
      () => readIds.websitePage(query),
      () => ({ kind: ENTRY_KINDS.websitePage, key: websiteListKey(query), lifetime: 'recent', droppedByWrites: 'any' }),
      (send) => fetchWebsitePage(send, query),
    );
    page.nodes.forEach(prime);
    return page;
  }, websiteListKey);
  // Stored only once this request read the page's website: the look-ahead and Query.stats start both
  // together, other paths have read it before, so waiting for it costs no upstream call. A statistic
  // whose range ends before today, in the upstream's time zone, is settled: it never changes again.
  const statPage = perKey(
    (query: StatsQuery) =>
      read(
        () => readIds.statPage(query),
        () => ({
          kind: ENTRY_KINDS.statPage,
          key: statsQueryKey(query),
          lifetime: query.to < dayIn(clock.timeZone, clock.now()) ? 'settled' : 'recent',
          droppedByWrites: 'none',
          owned: () => website.load(query.websiteId),
        }),
        (send) => fetchStatPage(send, statNames, query),
      ),
    statsQueryKey,
  );

  let writes = 0;
  /**
   * A write, then what it invalidates, unless the upstream refused it (a 4xx: it changed nothing). A
   * write the install answered otherwise (a 5xx, a body cut short) may have been applied: it drops as
   * one that succeeded. One it never answered (a timeout, a cut connection, a call cancelled because its
   * client left or never sent) drops only for a key the install accepted lately: a made-up key was
   * never applied, and must leave no counter in the store. A refused key (401) drops its entries as a
   * read's 401 does. A traced request records its calls (the write, a read back) under the write, with
   * the field that made it.
   */
  async function writing<T>(websiteId: string | null, by: AskedBy, write: (send: Send) => Promise<T>): Promise<T> {
    const touched = websiteId === null ? null : { kind: ENTRY_KINDS.website, key: websiteId };
    let sendWrite = send;
    if (trace !== undefined) {
      const id = `write ${++writes}`;
      trace.need(id, by?.path);
      sendWrite = sendFor({ id, calls: [] });
    }
    let value: T;
    try {
      value = await write(sendWrite);
    } catch (error) {
      if (isKeyRevoked(error)) await cache.refused();
      else if (wasWriteRefused(error)) throw error;
      else if (installAnswered(error) || (await cache.acceptedLately())) await cache.written(touched);
      throw error;
    }
    await cache.written(touched);
    return value;
  }

  return {
    traced: trace !== undefined,
    // A traced request's reads name the fields that asked for them; no other request does anything with `by`.
    website(id, by) {
      if (trace !== undefined && by !== undefined) trace.need(readIds.website(id), by.path);
      return website.load(id);
    },
    websitePage(query, by) {
      if (trace !== undefined && by !== undefined) trace.need(readIds.websitePage(query), by.path);
      return websitePage.load(query);
    },
    statPage(query, by) {
      if (trace !== undefined && by !== undefined) trace.need(readIds.statPage(query), by.path);
      return statPage.load(query);
    },
    async everyStatRow(query, bound, knownPages = 1, by) {
      const load = (page: number) => {
        const pageQuery = { ...query, perPage: ROWS_PER_PAGE, page };
        if (trace !== undefined && by !== undefined) trace.need(readIds.statPage(pageQuery), by.path);
        return statPage.load(pageQuery);
      };
      const rows: Stat[] = [];
      let read = 0;
      let wanted = knownPages;
      while (wanted > read) {
        // All a full page without paging numbers can say is that one more may follow: once every row
        // the range can hold is in, nothing could be on it.
        if (wanted === read + 1 && bound.rows !== null && rows.length >= bound.rows) break;
        if (wanted > bound.pages) throw tooManyPages(query, wanted, bound);
        const loads = Array.from({ length: wanted - read }, (_, i) => load(read + 1 + i));
        // A failed page waits for the others: none goes on after the answer, missing from its upstreamCalls.
        await Promise.allSettled(loads);
        const pages = await Promise.all(loads);
        read = wanted;
        for (const page of pages) {
          rows.push(...page.nodes);
          wanted = Math.max(wanted, page.lastPage);
        }
      }
      return rows;
    },
    // The website as stored answers later reads of it in this request (a payload's `query`).
    createWebsite: (write, by) =>
      writing(null, by, async (send) => {
        const created = await storeWebsite(send, write);
        prime(created);
        return created;
      }),
    updateWebsite: (id, write, by) =>
      writing(id, by, async (send) => {
        const updated = await patchWebsite(send, id, write);
        prime(updated);
        return updated;
      }),
    async deleteWebsite(id, by) {
      const deletion = await writing(id, by, (send) => destroyWebsite(send, id));
      website.clear(id);
      return deletion;
    },
    checkKey: () => cache.checkKey(),
    keyAccepted: () => cache.keyAccepted(),
  };
}

/** The ids a traced request's reads are recorded under: one per loader key. */
const readIds = {
  website: (id: string): string => `website ${id}`,
  websitePage: (query: WebsiteListQuery): string => `websites ${websiteListKey(query)}`,
  statPage: (query: StatsQuery): string => `stats ${statsQueryKey(query)}`,
};

/** Stops a described call before it is sent. */
const DESCRIBED = new Error('described, not sent');

/**
 * The call `fetch` would send first, without sending it: what a read answered from the cache would have
 * cost (null when it would send none). Made only for a traced request's read.
 */
function described(fetch: (send: Send) => Promise<unknown>): Promise<CallShape | null> {
  return new Promise((resolve) => {
    fetch((call) => {
      resolve({ method: call.method, path: call.path, query: call.query });
      return Promise.reject(DESCRIBED);
    }).then(
      () => resolve(null),
      () => resolve(null),
    );
  });
}

/**
 * More pages than `bound` allows. Past what the statistic's range can hold, the upstream is not telling
 * the truth; short of that, the statistic is longer than the gateway reads whole.
 */
function tooManyPages(query: Pick<StatsQuery, 'name' | 'from' | 'to'>, pages: number, bound: PageBound): GatewayError {
  if (bound.rows !== null && pages > pagesOf(bound.rows)) {
    const name = query.name.toUpperCase();
    return new GatewayError(
      'UPSTREAM_BAD_RESPONSE',
      `The analytics service claimed ${pages} pages of ${ROWS_PER_PAGE} ${name} rows from ${query.from} to ${query.to}, where at most ${bound.rows} rows can be.`,
    );
  }
  return new GatewayError(
    'BAD_USER_INPUT',
    `This statistic has more than ${bound.pages * ROWS_PER_PAGE} rows to read; narrow it with search or a shorter range.`,
  );
}
