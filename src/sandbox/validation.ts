// Input rules of the upstream, as Laravel would apply them: empty strings count as absent
// (ConvertEmptyStringsToNull), strings are trimmed except the password (TrimStrings), and each
// failure is a message in Laravel's wording under the field's name. Pure functions, no I/O.
import { parseYmd } from './calendar.js';
import type { Dialect, SeriesName } from './dialect.js';
import { PER_PAGE_VALUES, seriesFor } from './dialect.js';

export type FieldErrors = Record<string, string[]>;
export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };
/** A decoded form or JSON body: strings from forms; anything JSON can hold from JSON bodies. */
export type Input = Readonly<Record<string, unknown>>;
export type Flag = 0 | 1;
export type PrivacyCode = 0 | 1 | 2;

const label = (field: string): string => field.replace(/_/g, ' ');
const MESSAGES = {
  required: (field: string) => `The ${label(field)} field is required.`,
  string: (field: string) => `The ${label(field)} field must be a string.`,
  boolean: (field: string) => `The ${label(field)} field must be true or false.`,
  integer: (field: string) => `The ${label(field)} field must be an integer.`,
  in: (field: string) => `The selected ${label(field)} is invalid.`,
  max: (field: string, max: number) => `The ${label(field)} field must not be greater than ${max} characters.`,
  dateFormat: (field: string) => `The ${label(field)} field must match the format Y-m-d.`,
};

class Collector {
  readonly errors: FieldErrors = {};
  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }
  result<T>(value: T): Validated<T> {
    return Object.keys(this.errors).length === 0 ? { ok: true, value } : { ok: false, errors: this.errors };
  }
}

/** The value as Laravel's middleware leaves it: trimmed, and null when empty. */
function normalised(input: Input, field: string, trim = true): unknown {
  const raw = input[field];
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') return raw;
  const text = trim ? raw.trim() : raw;
  return text === '' ? null : text;
}

const has = (input: Input, field: string): boolean => Object.hasOwn(input, field);

function parseFlag(value: unknown): Flag | undefined {
  if (value === true || value === 1 || value === '1' || value === 'true') return 1;
  if (value === false || value === 0 || value === '0' || value === 'false') return 0;
  return undefined;
}

function readFlag(errors: Collector, field: string, value: unknown): Flag | undefined {
  const flag = parseFlag(value);
  if (flag === undefined) errors.add(field, MESSAGES.boolean(field));
  return flag;
}

function readPrivacy(errors: Collector, value: unknown): PrivacyCode | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number)) {
    errors.add('privacy', MESSAGES.integer('privacy'));
    return undefined;
  }
  if (number !== 0 && number !== 1 && number !== 2) {
    errors.add('privacy', MESSAGES.in('privacy'));
    return undefined;
  }
  return number;
}

function readString(errors: Collector, field: string, value: unknown, max?: number): string | undefined {
  if (typeof value !== 'string') {
    errors.add(field, MESSAGES.string(field));
    return undefined;
  }
  if (max !== undefined && value.length > max) {
    errors.add(field, MESSAGES.max(field, max));
    return undefined;
  }
  return value;
}

/** Lower-cased, without scheme, `www.`, path, query or fragment: `https://www.Example.com/a` -> `example.com`. */
export function normaliseDomain(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/^www\./, '');
}

const DOMAIN_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export function isValidDomain(domain: string): boolean {
  return DOMAIN_NAME.test(domain) || IPV4.test(domain);
}

export const PASSWORD_MAX = 128;
const PASSWORD_REQUIRED = 'The password field is required when privacy is 2.';

export interface NewWebsite {
  domain: string;
  /** null only in the legacy dialect, which stores NULL when the field is not sent. */
  privacy: PrivacyCode | null;
  password: string | null;
  /** null as privacy. */
  email: Flag | null;
  excludeBots: Flag;
  excludeParams: string | null;
  excludeIps: string | null;
}

/**
 * Store: domain required, normalised and unique; defaults privacy 0, email 0, exclude_bots 1. The
 * older install has no default for privacy and email: it stores NULL (and reads NULL as 0).
 */
export function validateStore(
  input: Input,
  isDomainTaken: (domain: string) => boolean,
  dialect: Dialect = 'contract',
): Validated<NewWebsite> {
  const errors = new Collector();
  const unset = dialect === 'legacy' ? null : 0;
  let domain = '';
  const rawDomain = normalised(input, 'domain');
  if (rawDomain === null) errors.add('domain', MESSAGES.required('domain'));
  else if (typeof rawDomain !== 'string') errors.add('domain', MESSAGES.string('domain'));
  else {
    domain = normaliseDomain(rawDomain);
    if (domain.length > 255) errors.add('domain', MESSAGES.max('domain', 255));
    else if (!isValidDomain(domain)) errors.add('domain', 'The domain field must be a valid domain.');
    else if (isDomainTaken(domain)) errors.add('domain', 'The domain has already been taken.');
  }
  const rawPrivacy = normalised(input, 'privacy');
  const privacy = rawPrivacy === null ? unset : readPrivacy(errors, rawPrivacy);
  const rawPassword = normalised(input, 'password', false);
  const password = rawPassword === null ? null : readString(errors, 'password', rawPassword, PASSWORD_MAX);
  if (privacy === 2 && rawPassword === null) errors.add('password', PASSWORD_REQUIRED);
  const rawEmail = normalised(input, 'email');
  const email = rawEmail === null ? unset : readFlag(errors, 'email', rawEmail);
  const rawBots = normalised(input, 'exclude_bots');
  const excludeBots = rawBots === null ? 1 : readFlag(errors, 'exclude_bots', rawBots);
  const excludeParams = readOptionalText(errors, input, 'exclude_params');
  const excludeIps = readOptionalText(errors, input, 'exclude_ips');
  return errors.result({
    domain,
    privacy: privacy === undefined ? unset : privacy,
    password: password ?? null,
    email: email === undefined ? unset : email,
    excludeBots: excludeBots ?? 1,
    excludeParams: excludeParams ?? null,
    excludeIps: excludeIps ?? null,
  });
}

function readOptionalText(errors: Collector, input: Input, field: string): string | null | undefined {
  const value = normalised(input, field);
  return value === null ? null : readString(errors, field, value);
}

export interface WebsiteChanges {
  privacy?: PrivacyCode;
  password?: string;
  email?: Flag;
  excludeBots?: Flag;
  /** null clears the field. */
  excludeParams?: string | null;
  excludeIps?: string | null;
  favorite?: Flag;
}

/**
 * Update: every field optional, no defaults, domain ignored. An empty exclude_* clears it; an empty
 * flag or privacy leaves it unchanged. Privacy 2 needs a password, sent now or already stored. The
 * older install has no favorites: it neither checks nor applies the field.
 */
export function validateUpdate(input: Input, hasStoredPassword: boolean, dialect: Dialect = 'contract'): Validated<WebsiteChanges> {
  const errors = new Collector();
  const changes: WebsiteChanges = {};
  const rawPrivacy = normalised(input, 'privacy');
  if (rawPrivacy !== null) {
    const privacy = readPrivacy(errors, rawPrivacy);
    if (privacy !== undefined) changes.privacy = privacy;
  }
  const rawPassword = normalised(input, 'password', false);
  if (rawPassword !== null) {
    const password = readString(errors, 'password', rawPassword, PASSWORD_MAX);
    if (password !== undefined) changes.password = password;
  }
  if (changes.privacy === 2 && rawPassword === null && !hasStoredPassword) errors.add('password', PASSWORD_REQUIRED);
  for (const [field, key] of [
    ['email', 'email'],
    ['exclude_bots', 'excludeBots'],
  ] as const) {
    const raw = normalised(input, field);
    if (raw === null) continue;
    const flag = readFlag(errors, field, raw);
    if (flag !== undefined) changes[key] = flag;
  }
  for (const [field, key] of [
    ['exclude_params', 'excludeParams'],
    ['exclude_ips', 'excludeIps'],
  ] as const) {
    if (!has(input, field)) continue;
    const text = readOptionalText(errors, input, field);
    if (text !== undefined) changes[key] = text;
  }
  const rawFavorite = dialect === 'contract' ? normalised(input, 'favorite') : null;
  if (rawFavorite !== null) {
    const favorite = readFlag(errors, 'favorite', rawFavorite);
    if (favorite !== undefined) changes.favorite = favorite;
  }
  return errors.result(changes);
}

/** Numeric columns the older install echoes as sent: it answers a write with the model it just filled from the request. */
export const ECHOED_FIELDS = ['privacy', 'email', 'exclude_bots'] as const;
export type EchoedField = (typeof ECHOED_FIELDS)[number];

/** The echoed fields that were sent, as the middleware left them (trimmed strings, from a form). */
export function postedValues(input: Input): Partial<Record<EchoedField, unknown>> {
  const posted: Partial<Record<EchoedField, unknown>> = {};
  for (const field of ECHOED_FIELDS) {
    const value = normalised(input, field);
    if (value !== null) posted[field] = value;
  }
  return posted;
}

type Query = Readonly<Record<string, string>>;

function readChoice<T extends string | number>(errors: Collector, query: Query, field: string, choices: readonly T[], fallback: T): T {
  const raw = normalised(query, field);
  if (raw === null) return fallback;
  const match = choices.find((choice) => String(choice) === raw);
  if (match === undefined) {
    errors.add(field, MESSAGES.in(field));
    return fallback;
  }
  return match;
}

export interface ListQuery {
  search: string | undefined;
  favorite: Flag | undefined;
  sortBy: 'id' | 'domain';
  sort: 'asc' | 'desc';
  perPage: number;
}

export function validateListQuery(query: Query): Validated<ListQuery> {
  const errors = new Collector();
  const search = normalised(query, 'search');
  readChoice(errors, query, 'search_by', ['domain'], 'domain');
  const rawFavorite = normalised(query, 'favorite');
  const favorite = rawFavorite === null ? undefined : readFlag(errors, 'favorite', rawFavorite);
  return errors.result({
    search: typeof search === 'string' ? search : undefined,
    favorite,
    sortBy: readChoice(errors, query, 'sort_by', ['id', 'domain'], 'id'),
    sort: readChoice(errors, query, 'sort', ['desc', 'asc'], 'desc'),
    perPage: readChoice(errors, query, 'per_page', PER_PAGE_VALUES, 10),
  });
}

export interface StatsQuery {
  /** The series asked for, under its internal name. */
  name: SeriesName;
  fromDay: number;
  toDay: number;
  search: string | undefined;
  sortBy: 'count' | 'value';
  sort: 'asc' | 'desc';
  perPage: number;
}

/** name, from and to: checked alike by both installs (a FormRequest), but against each one's names. */
function readStatsRange(errors: Collector, query: Query, dialect: Dialect): Pick<StatsQuery, 'name' | 'fromDay' | 'toDay'> {
  const name = normalised(query, 'name');
  const series = typeof name === 'string' ? seriesFor(dialect, name) : undefined;
  if (name === null) errors.add('name', MESSAGES.required('name'));
  else if (series === undefined) errors.add('name', MESSAGES.in('name'));
  const readDate = (field: 'from' | 'to'): number | null => {
    const raw = normalised(query, field);
    if (raw === null) {
      errors.add(field, MESSAGES.required(field));
      return null;
    }
    const day = parseYmd(String(raw));
    if (day === null) errors.add(field, MESSAGES.dateFormat(field));
    return day;
  };
  const fromDay = readDate('from');
  const toDay = readDate('to');
  if (fromDay !== null && toDay !== null && toDay < fromDay) {
    errors.add('to', 'The to field must be a date after or equal to from.');
  }
  return { name: series ?? 'visitor', fromDay: fromDay ?? 0, toDay: toDay ?? 0 };
}

export function validateStatsQuery(query: Query): Validated<StatsQuery> {
  const errors = new Collector();
  const range = readStatsRange(errors, query, 'contract');
  const search = normalised(query, 'search');
  readChoice(errors, query, 'search_by', ['value'], 'value');
  return errors.result({
    ...range,
    search: typeof search === 'string' ? search : undefined,
    sortBy: readChoice(errors, query, 'sort_by', ['count', 'value'], 'count'),
    sort: readChoice(errors, query, 'sort', ['desc', 'asc'], 'desc'),
    perPage: readChoice(errors, query, 'per_page', PER_PAGE_VALUES, 10),
  });
}

// The older install checks little of a read: what it does not check goes straight into the
// query builder, and what the builder or the paginator cannot take is an exception, i.e. a 500.

/** A read as the older install takes it: a 422 for what its rules check, a 500 for what crashes it. */
export type LenientRead<T> = Validated<T> | { ok: 'crash'; reason: string };

const crash = (reason: string): { ok: 'crash'; reason: string } => ({ ok: 'crash', reason });

/** The model's default page size, used when per_page is 0 (`$perPage ?: $model->getPerPage()`). */
const LARAVEL_PER_PAGE = 15;

/** per_page: any whole number, 0 meaning 15; absent 10; anything else breaks the paginator. */
function lenientPerPage(query: Query): number | undefined {
  const raw = normalised(query, 'per_page');
  if (raw === null) return 10;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) return undefined;
  return Number(raw) === 0 ? LARAVEL_PER_PAGE : Number(raw);
}

/** A column or direction for orderBy: compared case-insensitively, as SQL and Laravel do; undefined breaks the query. */
function lenientOrder<T extends string>(query: Query, field: string, choices: readonly T[], fallback: T): T | undefined {
  const raw = normalised(query, field);
  if (raw === null) return fallback;
  return choices.find((choice) => choice === String(raw).toLowerCase());
}

/** The older install's list query: search_by and favorite ignored (it has no favorites); nothing is a 422. */
export function validateLegacyListQuery(query: Query): LenientRead<ListQuery> {
  const search = normalised(query, 'search');
  const sortBy = lenientOrder(query, 'sort_by', ['id', 'domain'] as const, 'id');
  if (sortBy === undefined) return crash('unknown column in ORDER BY');
  const sort = lenientOrder(query, 'sort', ['desc', 'asc'] as const, 'desc');
  if (sort === undefined) return crash('Order direction must be "asc" or "desc".');
  const perPage = lenientPerPage(query);
  if (perPage === undefined) return crash('per_page is not a whole number');
  return { ok: true, value: { search: typeof search === 'string' ? search : undefined, favorite: undefined, sortBy, sort, perPage } };
}

/** The older install's stats query: name, from and to checked (its names), search_by ignored, the rest lenient. */
export function validateLegacyStatsQuery(query: Query): LenientRead<StatsQuery> {
  const errors = new Collector();
  const range = readStatsRange(errors, query, 'legacy');
  // The rules run before the controller, so a 422 wins over what would crash later.
  if (Object.keys(errors.errors).length > 0) return { ok: false, errors: errors.errors };
  const search = normalised(query, 'search');
  const sortBy = lenientOrder(query, 'sort_by', ['count', 'value'] as const, 'count');
  if (sortBy === undefined) return crash('unknown column in ORDER BY');
  const sort = lenientOrder(query, 'sort', ['desc', 'asc'] as const, 'desc');
  if (sort === undefined) return crash('Order direction must be "asc" or "desc".');
  const perPage = lenientPerPage(query);
  if (perPage === undefined) return crash('per_page is not a whole number');
  return { ok: true, value: { ...range, search: typeof search === 'string' ? search : undefined, sortBy, sort, perPage } };
}

/** Laravel's paginator reads `page` leniently: anything but an integer >= 1 means page 1. */
export function readPage(query: Query): number {
  const raw = query.page?.trim() ?? '';
  if (!/^\+?\d+$/.test(raw)) return 1;
  const page = Number(raw);
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}
