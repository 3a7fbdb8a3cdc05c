// Plain domain objects: what resolvers see. Wire shapes (strings for numbers, 0/1 flags, Laravel
// envelopes) never get past the decoders in upstream/wire.ts.

export type Privacy = 'PUBLIC' | 'PRIVATE' | 'PASSWORD';

/**
 * The statistics the gateway knows, by our own names (the GraphQL enum's, in lower case). How each
 * is called on the wire depends on the install: upstream/dialect.ts.
 */
export const STAT_NAMES = [
  'browser',
  'campaign',
  'city',
  'continent',
  'country',
  'device',
  'event',
  'landing_page',
  'language',
  'operating_system',
  'page',
  'pageview',
  'pageview_hour',
  'referrer',
  'screen_resolution',
  'visitor',
  'visitor_hour',
] as const;
export type StatName = (typeof STAT_NAMES)[number];

export const PER_PAGE_VALUES = [10, 25, 50, 100] as const;

export type SortDirection = 'asc' | 'desc';

export interface Website {
  /** Upstream id, as a decimal string. */
  id: string;
  domain: string;
  privacy: Privacy;
  passwordProtected: boolean;
  emailReports: boolean;
  excludeBots: boolean;
  /** null: this install does not report it (it is never invented). */
  excludeParams: string[] | null;
  excludeIps: string[] | null;
  favorite: boolean | null;
  /** ISO-8601, or null when the upstream sent none or something unreadable. */
  createdAt: string | null;
  updatedAt: string | null;
}

export interface Stat {
  value: string;
  count: number;
}

/** One page of a Laravel paginated list, normalised. */
export interface Page<T> {
  nodes: T[];
  totalCount: number;
  page: number;
  perPage: number;
  lastPage: number;
  hasNextPage: boolean;
}

/** What the caller asked for; used when the upstream omits `meta`. */
export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Deletion {
  id: string;
  deleted: boolean;
}

/** A 4xx error body, read tolerantly: both 422 shapes of docs/CONTRACT.md part B. */
export interface UpstreamErrorBody {
  message: string | null;
  /** Field name (as the upstream names it, e.g. `exclude_ips`) -> messages. Empty when none. */
  fieldErrors: Record<string, string[]>;
}

export interface WebsiteListQuery {
  search?: string;
  favorite?: boolean;
  sortBy: 'id' | 'domain';
  sort: SortDirection;
  perPage: number;
  page: number;
}

export interface StatsQuery {
  websiteId: string;
  name: StatName;
  from: string;
  to: string;
  search?: string;
  sortBy: 'count' | 'value';
  sort: SortDirection;
  perPage: number;
  page: number;
}

/** Fields of a website write, in domain terms; undefined means "not sent". */
export interface WebsiteWrite {
  domain?: string;
  privacy?: Privacy;
  password?: string;
  emailReports?: boolean;
  excludeBots?: boolean;
  excludeParams?: string[];
  excludeIps?: string[];
  favorite?: boolean;
}

/** What the install said of the key's rate limit (X-RateLimit-* headers of its latest answer). */
export interface RateLimit {
  limit: number;
  remaining: number;
}
