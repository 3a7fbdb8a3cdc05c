// Per-request DataLoaders. They are created with each GraphQL request's context and dropped with
// it, so their caches can never answer one key with data read by another. The upstream has no batch
// endpoints, so "batching" here means deduplication: every distinct read happens once per request
// and concurrent loads of the same key share one promise.
import DataLoader from 'dataloader';
import type { Page, Stat, StatsQuery, Website, WebsiteListQuery } from '../domain.js';
import { fetchStatPage, fetchWebsite, fetchWebsitePage, type Send } from './api.js';
import type { RequestCache } from './cache.js';
import type { StatNames } from './dialect.js';

export interface Loaders {
  website: DataLoader<string, Website>;
  websitePage: DataLoader<WebsiteListQuery, Page<Website>, string>;
  statPage: DataLoader<StatsQuery, Page<Stat>, string>;
  /** Makes a website read elsewhere (a list, a mutation) answer later loads of its id. */
  prime(website: Website): void;
}

/**
 * The key of a page of statistics, in the loaders and in the read cache: its fields in a fixed order,
 * an absent search as null. One JSON.stringify of an array: this runs for every stats field, twice
 * with the cache on, so it neither sorts field names nor builds a string per field.
 */
export function statsQueryKey(query: StatsQuery): string {
  const { websiteId, name, from, to, search, sortBy, sort, perPage, page } = query;
  return JSON.stringify([websiteId, name, from, to, search ?? null, sortBy, sort, perPage, page]);
}

/** The key of a page of websites, like statsQueryKey. */
export function websiteListKey(query: WebsiteListQuery): string {
  const { search, favorite, sortBy, sort, perPage, page } = query;
  return JSON.stringify([search ?? null, favorite ?? null, sortBy, sort, perPage, page]);
}

// With no batch endpoint there is nothing to gain from waiting a tick to collect keys, so each load
// is dispatched at once (batch: false) and the cache does the deduplication. A failure is returned
// as a value, not thrown: DataLoader drops the cache entry of a rejected batch, which would let a
// second field send the same failing read again.
function perKey<K, V, C = K>(load: (key: K) => Promise<V>, cacheKeyFn?: (key: K) => C): DataLoader<K, V, C> {
  return new DataLoader<K, V, C>(async ([key]) => {
    try {
      return [await load(key as K)];
    } catch (error) {
      return [error instanceof Error ? error : new Error(String(error))];
    }
  }, {
    batch: false,
    ...(cacheKeyFn ? { cacheKeyFn } : {}),
  });
}

/** Each loader reads through the request's cache (cache.ts), which may answer without the upstream. */
export function createLoaders(send: Send, statNames: StatNames, cache: RequestCache): Loaders {
  const website = perKey((id: string) => cache.website(id, () => fetchWebsite(send, id)));
  const prime = (site: Website): void => {
    website.clear(site.id).prime(site.id, site);
  };
  const websitePage = perKey(async (query: WebsiteListQuery) => {
    const page = await cache.websitePage(query, () => fetchWebsitePage(send, query));
    page.nodes.forEach(prime);
    return page;
  }, websiteListKey);
  // Stored only once this request read the page's website: the look-ahead and Query.stats start both
  // together, other paths have read it before, so waiting for it costs no upstream call.
  const statPage = perKey(
    (query: StatsQuery) => cache.statPage(query, () => fetchStatPage(send, statNames, query), () => website.load(query.websiteId)),
    statsQueryKey,
  );
  return { website, websitePage, statPage, prime };
}
