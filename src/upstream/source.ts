// One upstream data source per GraphQL request, the resolvers' only way upstream. Its calls carry the caller's
// key, go out at most `maxConcurrency` at a time, stop when the caller goes away and end by the deadline. Reads
// are made once per request (perKey), then go through the read cache; nothing here outlives the request.
import { dayIn, type Clock } from '../analytics/calendar.js';
import type { Deletion, Page, RateLimit, Stat, StatsQuery, Website, WebsiteListQuery, WebsiteWrite } from '../domain.js';
import { GatewayError, isKeyRevoked } from '../errors.js';
import { type SettingsOf, integer } from '../settings.js';
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
export type RequestBounds = SettingsOf<typeof REQUEST_BOUNDS_SETTINGS>;

/** What one request's upstream calls did: for `extensions`, the log and Cache-Control. */
export interface UpstreamUsage {
  /** Upstream calls made for this request (retries not counted). */
  upstreamCalls: number;
  /** What the upstream's latest answer said of the key's rate limit; null when it said nothing. */
  rateLimit: RateLimit | null;
  /** What the reads did with the cache (set by createSource). */
  cache: CacheUsage;
}

export interface SourceRequest {
  /** The caller's Authorization header, or why none is fit to forward (every call is then refused with it). */
  credentials: { authorization: string } | { problem: string };
  /** Aborted when the caller goes away: its calls in flight and their retries stop. */
  signal: AbortSignal;
  /** Date.now() by which every call of the request, retries included, is over. */
  deadline: number;
  maxConcurrency: number;
  /** Counted into as calls are made (shared with the context, which reports it). */
  usage: UpstreamUsage;
  /** What the request accepts from the cache beyond its lifetimes (a live poll: today fresh). */
  freshness?: Freshness;
  /** The store's part of the request, as its stored-answer lookup left it. */
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

/** What asks for a read or write: the field's resolve info, whose `path` a traced request's trace names. */
type AskedBy = { readonly path: FieldPath } | undefined;

export interface UpstreamSource {
  /** A website of the caller's; NOT_FOUND for an unknown id or another user's website. */
  website(id: string, by?: AskedBy): Promise<Website>;
  /** A page of the caller's websites; each also answers later reads of its id in this request. */
  websitePage(query: WebsiteListQuery, by?: AskedBy): Promise<Page<Website>>;
  /** A page of a statistic, cached only once this request has read its website (the upstream may serve anyone's). */
  statPage(query: StatsQuery, by?: AskedBy): Promise<Page<Stat>>;
  /**
   * Every row of a statistic, 100 a page, at most `bound.pages` pages (the field's cost): the `knownPages` at once,
   * then as many as they say there are, then on while a last page says another follows.
   */
  everyStatRow(query: Omit<StatsQuery, 'page' | 'perPage'>, bound: PageBound, knownPages?: number, by?: AskedBy): Promise<Stat[]>;
  /** `write.domain` must be normalised as the upstream stores it, so that it can be found again. */
  createWebsite(write: WebsiteWrite, by?: AskedBy): Promise<Website>;
  updateWebsite(id: string, write: WebsiteWrite, by?: AskedBy): Promise<Website>;
  deleteWebsite(id: string, by?: AskedBy): Promise<Deletion>;
  /** Whether the request records a trace (a field answered by the look-ahead then says it needed it). */
  readonly traced: boolean;
  /** The request cache's keyAccepted: the APQ registration asks. */
  keyAccepted(): boolean;
  /** The request cache's checkKey: a live stream of a key not known proves it before it takes a place. */
  checkKey(): Promise<void>;
}

// A read made once per request and key: its promise, a failure's too, answers the key's later loads. Not
// DataLoader: with no batch endpoint, its batching only put a promise job, a tick and a batch before each call.
function perKey<K, V>(read: (key: K) => Promise<V>, keyOf: (key: K) => unknown = (key) => key) {
  const made = new Map<unknown, Promise<V>>();
  return {
    load(key: K): Promise<V> {
      const name = keyOf(key);
      let loaded = made.get(name);
      if (loaded === undefined) made.set(name, (loaded = read(key)));
      return loaded;
    },
    set: (key: K, value: V): void => void made.set(keyOf(key), Promise.resolve(value)),
    clear: (key: K): void => void made.delete(keyOf(key)),
  };
}

export function createSource(upstream: Upstream, request: SourceRequest): UpstreamSource {
  const { client, statNames, clock } = upstream;
  const { credentials, deadline, usage } = request;
  const limit = concurrencyLimit(request.maxConcurrency);
  const onRateLimit = (rateLimit: RateLimit): void => {
    usage.rateLimit = rateLimit;
  };
  // One listener on the request's signal, at the first call; the deadline needs none (the client gives each attempt the time left).
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
  /** Sends a call of the request; a traced request records it under `read` (null: a write's, or `note`'s). */
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
        // The cache sees reads' answers; a write's success tells it the key is accepted.
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

  /** `fetch` through the cache; a traced request records what the cache did and the calls made, under `readId`. */
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
  const prime = (site: Website): Website => {
    website.set(site.id, site);
    return site;
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
  // Stored once this request read the page's website; a range that ends before today (upstream's zone) is settled.
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
   * A write, then what it invalidates, unless refused (a 4xx). One never answered drops only for a key accepted
   * lately: a made-up key must leave no counter in the store. A 401 drops the key's entries.
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

  /** A load of `loader`; a traced request's trace names the field that asked for it (`by`). */
  const asked = <K, V>(loader: { load(key: K): Promise<V> }, key: K, readId: (key: K) => string, by: AskedBy): Promise<V> => {
    if (trace !== undefined && by !== undefined) trace.need(readId(key), by.path);
    return loader.load(key);
  };

  return {
    traced: trace !== undefined,
    website: (id, by) => asked(website, id, readIds.website, by),
    websitePage: (query, by) => asked(websitePage, query, readIds.websitePage, by),
    statPage: (query, by) => asked(statPage, query, readIds.statPage, by),
    async everyStatRow(query, bound, knownPages = 1, by) {
      const load = (page: number) => asked(statPage, { ...query, perPage: ROWS_PER_PAGE, page }, readIds.statPage, by);
      const rows: Stat[] = [];
      let read = 0;
      let wanted = knownPages;
      while (wanted > read) {
        // A full page without paging numbers only says one more may follow: none can once the range is full.
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
    // The website written answers later reads of it in this request (a payload's `query`).
    createWebsite: (write, by) => writing(null, by, async (send) => prime(await storeWebsite(send, write))),
    updateWebsite: (id, write, by) => writing(id, by, async (send) => prime(await patchWebsite(send, id, write))),
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

/** The call `fetch` would send first, without sending it: what a read the cache answered would have cost. */
function described(fetch: (send: Send) => Promise<unknown>): Promise<CallShape | null> {
  return new Promise((resolve) => {
    const none = (): void => resolve(null);
    fetch((call) => {
      resolve({ method: call.method, path: call.path, query: call.query });
      return Promise.reject(DESCRIBED);
    }).then(none, none);
  });
}

/** More pages than `bound` allows: past what the range can hold, the upstream is wrong; short of it, too long. */
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
