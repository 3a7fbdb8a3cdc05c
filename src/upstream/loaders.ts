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
 * A cache key that is the same for the same parameter set, whatever order fields came in; an
 * undefined field counts as absent. (Called for every stats field: a plain loop, no entries array.)
 */
export function queryKey(query: object): string {
  const fields = query as Record<string, unknown>;
  let key = '';
  for (const name of Object.keys(fields).sort()) {
    const value = fields[name];
    if (value !== undefined) key += `${name}=${JSON.stringify(value)};`;
  }
  return key;
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
  }, queryKey);
  const statPage = perKey((query: StatsQuery) => cache.statPage(query, () => fetchStatPage(send, statNames, query)), queryKey);
  return { website, websitePage, statPage, prime };
}
