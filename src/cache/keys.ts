// The names of what is cached: a read's key (in a request's loaders and the read cache) and the names in the
// store. Gateways of two versions on one Redis share entries only while these stay as they are.
import type { StatsQuery, WebsiteListQuery } from '../domain.js';

/** The key of a page of statistics: its fields in a fixed order, one JSON.stringify of an array (a hot path). */
export function statsQueryKey(query: StatsQuery): string {
  const { websiteId, name, from, to, search, sortBy, sort, perPage, page } = query;
  return JSON.stringify([websiteId, name, from, to, search ?? null, sortBy, sort, perPage, page]);
}

/** The key of a page of websites, like statsQueryKey. */
export function websiteListKey(query: WebsiteListQuery): string {
  const { search, favorite, sortBy, sort, perPage, page } = query;
  return JSON.stringify([search ?? null, favorite ?? null, sortBy, sort, perPage, page]);
}

/** What a cache entry holds: a website by id, a page of websites, a page of a statistic. */
export const ENTRY_KINDS = { website: 'w', websitePage: 'l', statPage: 's' } as const;

/** Names in the store of one API key's things, with its id as a hash tag: on a cluster, one key's are in one slot. */
export const storeNames = {
  /** The key's generation: a 401 moves it on, and every entry of the older one is out of reach. */
  generation: (keyId: string): string => `gen:{${keyId}}`,
  /** The key's writes: every write with it moves this on, which drops its lists (their names hold it). */
  writes: (keyId: string): string => `lists:{${keyId}}`,
  /** Marked while the upstream has accepted the key within KEY_RECHECK_S. */
  seen: (keyId: string): string => `seen:{${keyId}}`,
  /** Marked while the key may have entries: only then does a 401 or a write have anything to drop. */
  hasEntries: (keyId: string): string => `has:{${keyId}}`,
  /** How every `hasEntries` name starts. */
  everyHasEntries: 'has:{',
  /** The key's id in a `hasEntries` name, or undefined when the name is not one. */
  keyIdOfHasEntries: (name: string): string | undefined => /^has:\{([^{}]+)\}$/.exec(name)?.[1],
  /** The prefix of the entries of a key's generation. */
  entries: (keyId: string, generation: number): string => `c:{${keyId}}:${generation}`,
  /** One entry: `kind` is one of ENTRY_KINDS, followed by the writes counter for a list. */
  entry: (entries: string, kind: string, key: string): string => `${entries}:${kind}:${key}`,
  /** A stored answer (stored-answers.ts): `request` hashes all of the request but its key. */
  answer: (keyId: string, request: string): string => `r:{${keyId}}:${request}`,
};
