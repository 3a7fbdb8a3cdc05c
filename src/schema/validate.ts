// Pure checks of what a caller sends, run before any upstream call. Each problem names the
// argument or input field and what is allowed, so a frontend can show it next to the right control.
import { PER_PAGE_VALUES, type SortDirection, type WebsiteWrite } from '../domain.js';
import { badInput } from '../errors.js';

export interface Problem {
  /** Path of the argument or input field, e.g. ['input', 'domain']. */
  field: string[];
  message: string;
}

export const LIMITS = {
  search: 255,
  domain: 255,
  password: 128,
  listEntries: 1_000,
  listEntry: 255,
  page: 1_000_000,
} as const;

/** `value` if it is a real calendar date written YYYY-MM-DD, else null. */
export function parseCalendarDate(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real && year >= 1970 ? value : null;
}

export function idProblem(field: string[], id: string): Problem | null {
  return /^[1-9]\d{0,15}$/.test(id)
    ? null
    : { field, message: `${field.join('.')} must be a positive integer id, got ${JSON.stringify(id.slice(0, 40))}.` };
}

export interface PagingArgs {
  perPage: number;
  page: number;
}

export function pagingProblems({ perPage, page }: PagingArgs): Problem[] {
  const problems: Problem[] = [];
  if (!(PER_PAGE_VALUES as readonly number[]).includes(perPage)) {
    problems.push({ field: ['perPage'], message: `perPage must be one of ${PER_PAGE_VALUES.join(', ')}, got ${perPage}.` });
  }
  if (!Number.isInteger(page) || page < 1 || page > LIMITS.page) {
    problems.push({ field: ['page'], message: `page must be an integer from 1 to ${LIMITS.page}, got ${page}.` });
  }
  return problems;
}

/** The paging arguments of a list, defaulted (an explicit null means "the default") and checked. */
export function paging(args: { perPage?: number | null; page?: number | null; search?: string | null; sort?: SortDirection | null }) {
  const perPage = args.perPage ?? 10;
  const page = args.page ?? 1;
  // An empty search filters nothing: it is not sent, so it shares a cache entry with no search.
  const search = args.search === '' || args.search === null ? undefined : args.search;
  assertNoProblems([...pagingProblems({ perPage, page }), searchProblem(search)]);
  return { perPage, page, sort: args.sort ?? 'desc', ...(search === undefined ? {} : { search }) };
}

export function searchProblem(search: string | undefined): Problem | null {
  return search !== undefined && search.length > LIMITS.search
    ? { field: ['search'], message: `search must be at most ${LIMITS.search} characters, got ${search.length}.` }
    : null;
}

export function dateProblem(argument: string, value: string): Problem | null {
  return parseCalendarDate(value) === null
    ? { field: [argument], message: `${argument} must be a real calendar date written YYYY-MM-DD, got ${JSON.stringify(value.slice(0, 40))}.` }
    : null;
}

export function dateRangeProblem(from: string, to: string): Problem | null {
  return from > to ? { field: ['to'], message: `to (${to}) must be on or after from (${from}).` } : null;
}

/** Throws the first problem as a BAD_USER_INPUT GraphQL error: for query arguments. */
export function assertNoProblems(problems: (Problem | null)[]): void {
  const first = problems.find((problem): problem is Problem => problem !== null);
  if (first) throw badInput(first.field.join('.'), first.message);
}

const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * The domain as the upstream will store it (lower case, no scheme, no `www.`, no path), or null
 * when it is not a domain name or an IPv4 address.
 */
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
  return labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && /^[a-z][a-z0-9-]*$/.test(tld)
    ? domain
    : null;
}

function listProblems(name: 'excludeParams' | 'excludeIps', entries: string[] | undefined): Problem[] {
  if (entries === undefined) return [];
  const field = ['input', name];
  if (entries.length > LIMITS.listEntries) {
    return [{ field, message: `${name} may hold at most ${LIMITS.listEntries} entries, got ${entries.length}.` }];
  }
  // One entry per line upstream: a line break inside an entry would silently become two entries.
  const bad = entries.findIndex((entry) => entry.trim() === '' || /[\r\n]/.test(entry) || entry.length > LIMITS.listEntry);
  return bad === -1
    ? []
    : [{ field: [...field, String(bad)], message: `${name}[${bad}] must be a non-empty single line of at most ${LIMITS.listEntry} characters.` }];
}

/** Problems of a create or update input; `creating` adds the rules that only hold on create. */
export function websiteWriteProblems(write: WebsiteWrite, creating: boolean): Problem[] {
  const problems: Problem[] = [];
  if (creating && (write.domain === undefined || normalizeDomain(write.domain) === null)) {
    problems.push({
      field: ['input', 'domain'],
      message: 'domain must be a domain name (example.com) or an IPv4 address; a scheme and "www." are stripped.',
    });
  }
  if (write.password !== undefined && (write.password.length < 1 || write.password.length > LIMITS.password)) {
    problems.push({ field: ['input', 'password'], message: `password must be 1 to ${LIMITS.password} characters.` });
  }
  // The install requires the password with privacy 2 on update too (Laravel's required_if).
  if (write.privacy === 'PASSWORD' && write.password === undefined) {
    problems.push({ field: ['input', 'password'], message: 'password is required when privacy is PASSWORD.' });
  }
  problems.push(...listProblems('excludeParams', write.excludeParams), ...listProblems('excludeIps', write.excludeIps));
  return problems;
}
