// Plain domain objects: what resolvers see. Wire shapes (strings for numbers, 0/1 flags, Laravel
// envelopes) never get past the decoders in upstream/wire.ts.

export type Privacy = 'PUBLIC' | 'PRIVATE' | 'PASSWORD';

/** By our own names (the GraphQL enum's, in lower case); on the wire: upstream/dialect.ts. */
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

/** How the upstream's JSON carries a Website field (upstream/wire.ts): its value here. */
export interface ReadTypes {
  /** A positive integer, or its decimal string; kept as a decimal string. */
  id: string;
  /** A non-empty string. */
  domain: string;
  /** A code: 0, 1 or 2 (NULL: public). */
  privacy: Privacy;
  /** 0/1 or true/false (NULL: false). */
  flag: boolean;
  /** A flag some installs leave out: false then. */
  optionalFlag: boolean;
  /** One entry per line, or a list. */
  lines: string[];
  /** ISO-8601 or Laravel's `Y-m-d H:i:s`; null when it is unreadable (informative only: never an error). */
  timestamp: string | null;
}

/** What a write sends of a Website field (upstream/api.ts encodes it, schema/validate.ts checks it). */
export interface WriteTypes {
  /** A domain name or IPv4 address. */
  domain: string;
  /** A password, never repeated in a message. */
  password: string;
  privacy: Privacy;
  flag: boolean;
  /** Sent one entry per line: an empty list clears the field. */
  lines: string[];
}

/** `note` is added to the field's description in that input. */
export interface InputUse {
  required?: true;
  note?: string;
}

interface WebsiteFieldSpec {
  /** Its name in the upstream's JSON and forms. */
  wire: string;
  /** `reported`: some installs never send it, and then it is null ("not reported"), never a made-up value. */
  read?: { type: keyof ReadTypes; description: string; reported?: true };
  /** Written by the mutations whose input takes it. */
  write?: { type: keyof WriteTypes; description: string; create?: InputUse; update?: InputUse };
}

/** Every field of a website, declared once: all else is made from it (docs/architecture.md); in the decoder's order. */
export const WEBSITE_FIELDS = {
  id: { wire: 'id', read: { type: 'id', description: "The website's id in the analytics service, also its id as a Node." } },
  domain: {
    wire: 'domain',
    read: { type: 'domain', description: 'Domain name (or IPv4 address), lower case, without scheme or "www.".' },
    write: { type: 'domain', description: 'Domain name or IPv4 address; a scheme and "www." are stripped.', create: { required: true } },
  },
  privacy: {
    wire: 'privacy',
    read: { type: 'privacy', description: 'Who may see the statistics page.' },
    write: { type: 'privacy', description: 'Who may see the statistics page.', create: {}, update: {} },
  },
  passwordProtected: {
    wire: 'password',
    read: { type: 'optionalFlag', description: 'Whether a password is set (the password itself is never returned).' },
  },
  password: {
    wire: 'password',
    write: {
      type: 'password',
      description: 'Password for privacy PASSWORD, 1 to 128 characters.',
      create: { note: 'Required with privacy PASSWORD.' },
      update: {
        note: 'May be left out with privacy PASSWORD when the website already has one, which it keeps; the install refuses PASSWORD for a website without one.',
      },
    },
  },
  emailReports: {
    wire: 'email',
    read: { type: 'flag', description: 'Whether periodic e-mail reports are sent.' },
    write: { type: 'flag', description: 'Send periodic e-mail reports.', create: {}, update: {} },
  },
  excludeBots: {
    wire: 'exclude_bots',
    read: { type: 'flag', description: 'Whether visits from known bots are ignored.' },
    write: { type: 'flag', description: 'Ignore visits from known bots.', create: {}, update: {} },
  },
  excludeParams: {
    wire: 'exclude_params',
    read: {
      type: 'lines',
      reported: true,
      description: 'URL query parameter names stripped from tracked pages. null: this install does not report it.',
    },
    write: {
      type: 'lines',
      description: 'URL query parameter names to strip from tracked pages; an empty list clears them.',
      create: {},
      update: {},
    },
  },
  excludeIps: {
    wire: 'exclude_ips',
    read: {
      type: 'lines',
      reported: true,
      description: 'IP addresses whose visits are not tracked. null: this install does not report it.',
    },
    write: { type: 'lines', description: 'IP addresses whose visits are not tracked; an empty list clears them.', create: {}, update: {} },
  },
  favorite: {
    wire: 'favorite',
    read: {
      type: 'flag',
      reported: true,
      description: 'Whether the owner marked the website as a favorite. null: this install does not report it (it has no favorites).',
    },
    write: { type: 'flag', description: 'Mark or unmark the website as a favorite.', update: {} },
  },
  createdAt: { wire: 'created_at', read: { type: 'timestamp', reported: true, description: 'When the website was added.' } },
  updatedAt: { wire: 'updated_at', read: { type: 'timestamp', reported: true, description: 'When its settings last changed.' } },
} as const satisfies Record<string, WebsiteFieldSpec>;

type WebsiteFields = typeof WEBSITE_FIELDS;
type FieldName = keyof WebsiteFields;

export type ReadField = { [F in FieldName]: WebsiteFields[F] extends { read: object } ? F : never }[FieldName];
export type WriteField = { [F in FieldName]: WebsiteFields[F] extends { write: object } ? F : never }[FieldName];
export type InputField<On extends 'create' | 'update'> = {
  [F in FieldName]: WebsiteFields[F] extends { write: { [K in On]: InputUse } } ? F : never;
}[FieldName];

type ReadValue<Read> = Read extends { type: infer T extends keyof ReadTypes }
  ? ReadTypes[T] | (Read extends { reported: true } ? null : never)
  : never;
type WriteValue<Write> = Write extends { type: infer T extends keyof WriteTypes } ? WriteTypes[T] : never;

export type Website = { [F in ReadField]: ReadValue<WebsiteFields[F]['read']> };

/** Fields of a website write, in domain terms; undefined means "not sent". */
export type WebsiteWrite = { [F in WriteField]?: WriteValue<WebsiteFields[F]['write']> };

const fieldNames = Object.keys(WEBSITE_FIELDS) as FieldName[];
export const READ_FIELDS = fieldNames.filter((name): name is ReadField => 'read' in WEBSITE_FIELDS[name]);
export const WRITE_FIELDS = fieldNames.filter((name): name is WriteField => 'write' in WEBSITE_FIELDS[name]);

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

/** Used when the upstream omits `meta`. */
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

/** X-RateLimit-* of the upstream's latest answer. */
export interface RateLimit {
  limit: number;
  remaining: number;
}
