// Pure checks of what a caller sends, run before any upstream call. Each problem names the argument or
// input field, the value and what is allowed, so a frontend can show it by the right control. A field
// declares its checks (`argumentProblems` in its extensions); use-argument-checks.ts runs them over the
// whole operation before any resolver, and the resolvers call the same functions.
import { LRUCache } from 'lru-cache';
import { PER_PAGE_VALUES, WEBSITE_FIELDS, WRITE_FIELDS, type SortDirection, type WebsiteWrite, type WriteTypes } from '../domain.js';
import { GatewayError } from '../errors.js';

export interface Problem {
  /** Path of the argument or input field, e.g. ['input', 'domain']. */
  field: string[];
  message: string;
}

declare module 'graphql' {
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs> {
    /** Every check of the field's arguments that needs no upstream data. */
    argumentProblems?: (args: _TArgs) => Problem[];
  }
}

export const LIMITS = {
  search: 255,
  domain: 255,
  password: 128,
  listEntries: 1_000,
  listEntry: 255,
  page: 1_000_000,
} as const;

/** Quoted, and cut short (it may be anything a caller typed). */
export function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

export const problemsOf = (checks: (Problem | null)[]): Problem[] => checks.filter((problem): problem is Problem => problem !== null);

/** A dashboard's few dates are checked a dozen times a request. */
const checkedDates = new LRUCache<string, boolean>({ max: 1_024 });

export function parseCalendarDate(value: string): string | null {
  let real = checkedDates.get(value);
  if (real === undefined) {
    real = checkCalendarDate(value);
    // Only what can be a date is kept: a long string is checked, never remembered.
    if (value.length === 10) checkedDates.set(value, real);
  }
  return real ? value : null;
}

function checkCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real && year >= 1970;
}

export function idProblem(field: string[], id: string): Problem | null {
  return /^[1-9]\d{0,15}$/.test(id) ? null : { field, message: `${field.join('.')} must be a positive integer id, got ${shown(id)}.` };
}

export interface ListArgs {
  perPage?: number | null;
  page?: number | null;
  search?: string | null;
  sort?: SortDirection | null;
}

/** Defaulted (an explicit null means "the default"), unchecked. */
export function listArguments(args: ListArgs) {
  const perPage = args.perPage ?? 10;
  const page = args.page ?? 1;
  // An empty search filters nothing: it is not sent, so it shares a cache entry with no search.
  const search = args.search === '' || args.search === null ? undefined : args.search;
  return { perPage, page, sort: args.sort ?? 'desc', search };
}

export function listArgumentsProblems(args: ListArgs): Problem[] {
  const { perPage, page, search } = listArguments(args);
  const problems: Problem[] = [];
  if (!(PER_PAGE_VALUES as readonly number[]).includes(perPage)) {
    problems.push({ field: ['perPage'], message: `perPage must be one of ${PER_PAGE_VALUES.join(', ')}, got ${perPage}.` });
  }
  if (!Number.isInteger(page) || page < 1 || page > LIMITS.page) {
    problems.push({ field: ['page'], message: `page must be an integer from 1 to ${LIMITS.page}, got ${page}.` });
  }
  if (search !== undefined && search.length > LIMITS.search) {
    problems.push({ field: ['search'], message: `search must be at most ${LIMITS.search} characters, got ${search.length}.` });
  }
  return problems;
}

export function dateProblem(argument: string, value: string): Problem | null {
  return parseCalendarDate(value) === null
    ? { field: [argument], message: `${argument} must be a real calendar date written YYYY-MM-DD, got ${shown(value)}.` }
    : null;
}

export function dateRangeProblem(from: string, to: string): Problem | null {
  return from > to ? { field: ['to'], message: `to (${to}) must be on or after from (${from}).` } : null;
}

/** Throws the first problem as BAD_USER_INPUT: for query arguments. */
export function assertNoProblems(problems: (Problem | null)[]): void {
  const [first] = problemsOf(problems);
  if (first) throw new GatewayError('BAD_USER_INPUT', first.message, { argument: first.field.join('.') });
}

const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** As the upstream will store it (lower case, no scheme, `www.` or path); null: not a domain or IPv4 address. */
export function normalizeDomain(input: string): string | null {
  const domain = input
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[/?#].*$/, '');
  if (domain.length === 0 || domain.length > LIMITS.domain) return null;
  if (IPV4.test(domain)) return domain;
  const labels = domain.split('.');
  const tld = labels[labels.length - 1] ?? '';
  return labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && /^[a-z][a-z0-9-]*$/.test(tld) ? domain : null;
}

interface WriteCheck {
  write: WebsiteWrite;
  creating: boolean;
}

const noProblems = (): Problem[] => [];

/** The checks of each type of Website field. */
const WRITE_CHECKS: { [Type in keyof WriteTypes]: (name: string, value: WriteTypes[Type] | undefined, check: WriteCheck) => Problem[] } = {
  // Only create writes the domain, and requires it.
  domain: (name, value, { creating }) => {
    if (!creating || (value !== undefined && normalizeDomain(value) !== null)) return [];
    const message = `${name} must be a domain name (example.com) or an IPv4 address; a scheme and "www." are stripped. Got ${shown(value ?? '')}.`;
    return [{ field: ['input', name], message }];
  },
  password: (name, value, { write, creating }) => {
    // The password is never repeated in a message (messages reach logs and screens): its length is.
    if (value !== undefined && (value.length < 1 || value.length > LIMITS.password)) {
      return [{ field: ['input', name], message: `${name} must be 1 to ${LIMITS.password} characters, got ${value.length}.` }];
    }
    // On update the upstream decides (`sometimes`): a website that has a password keeps it, one without
    // is refused there.
    if (creating && write.privacy === 'PASSWORD' && value === undefined) {
      return [{ field: ['input', name], message: `${name} is required when privacy is PASSWORD.` }];
    }
    return [];
  },
  privacy: noProblems,
  flag: noProblems,
  lines: (name, entries) => {
    if (entries === undefined) return [];
    const field = ['input', name];
    if (entries.length > LIMITS.listEntries) {
      return [{ field, message: `${name} may hold at most ${LIMITS.listEntries} entries, got ${entries.length}.` }];
    }
    // One entry per line upstream: a line break inside an entry would silently become two entries.
    const bad = entries.findIndex((entry) => entry.trim() === '' || /[\r\n]/.test(entry) || entry.length > LIMITS.listEntry);
    const entry = entries[bad];
    if (entry === undefined) return [];
    const message = `${name}[${bad}] must be a non-empty single line of at most ${LIMITS.listEntry} characters, got ${shown(entry)}.`;
    return [{ field: [...field, String(bad)], message }];
  },
};

const checked = <Type extends keyof WriteTypes>(
  type: Type,
  name: string,
  value: WriteTypes[Type] | undefined,
  check: WriteCheck,
): Problem[] => WRITE_CHECKS[type](name, value, check);

/** In the table's order. */
export function websiteWriteProblems(write: WebsiteWrite, creating: boolean): Problem[] {
  return WRITE_FIELDS.flatMap((name) => checked(WEBSITE_FIELDS[name].write.type, name, write[name], { write, creating }));
}
