// Decoders from the upstream's JSON (docs/CONTRACT.md part B, read tolerantly) to the domain types; what
// they cannot read is a WireDecodeError naming the path in the body.
import { LRUCache } from 'lru-cache';
import {
  READ_FIELDS,
  WEBSITE_FIELDS,
  type Deletion,
  type Page,
  type PageRequest,
  type Privacy,
  type ReadTypes,
  type Stat,
  type UpstreamErrorBody,
  type Website,
} from '../domain.js';
import { WireDecodeError } from './errors.js';

type JsonObject = Record<string, unknown>;

/** Error messages reach API clients and logs, so only this much of an upstream string is shown. */
const SHOWN_STRING_LIMIT = 40;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    return JSON.stringify(value.length > SHOWN_STRING_LIMIT ? `${value.slice(0, SHOWN_STRING_LIMIT)}…` : value);
  }
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

function fail(path: string, expected: string, value: unknown): never {
  throw new WireDecodeError(`${path === '' ? 'body' : path}: expected ${expected}, got ${describe(value)}`);
}

const fieldPath = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);
const itemPath = (path: string, index: number): string => `${path}[${index}]`;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readObject(value: unknown, path: string): JsonObject {
  return isObject(value) ? value : fail(path, 'an object', value);
}

/** null counts as absent, as it does for most JSON producers. */
function readOptionalObject(value: unknown, path: string): JsonObject | undefined {
  return value === undefined || value === null ? undefined : readObject(value, path);
}

// A trailing ".0"/".00" is what a SQL SUM over integers can come back as.
const INTEGER_STRING = /^\d+(?:\.0+)?$/;

function readInteger(value: unknown, path: string, minimum: 0 | 1): number {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && INTEGER_STRING.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed < minimum) {
    fail(path, minimum === 0 ? 'a non-negative integer' : 'a positive integer', value);
  }
  // JSON may carry -0, which would otherwise leak through as a distinct value.
  return parsed === 0 ? 0 : parsed;
}

const readId = (value: unknown, path: string): string => String(readInteger(value, path, 1));

const TRUE_FLAGS: ReadonlySet<unknown> = new Set([true, 1, '1', 'true']);
const FALSE_FLAGS: ReadonlySet<unknown> = new Set([false, 0, '0', 'false', null]);

function readFlag(value: unknown, path: string): boolean {
  if (TRUE_FLAGS.has(value)) return true;
  return FALSE_FLAGS.has(value) ? false : fail(path, 'a flag (0/1 or true/false)', value);
}

const readOptionalFlag = (value: unknown, path: string): boolean => (value === undefined ? false : readFlag(value, path));

/** A field some installs never send: absent is null ("not reported"), never a made-up value. */
function readReported<T>(value: unknown, path: string, read: (value: unknown, path: string) => T): T | null {
  return value === undefined ? null : read(value, path);
}

/** How the wire writes a privacy level; it may be read as a number too. */
export const PRIVACY_CODES: Readonly<Record<Privacy, string>> = { PUBLIC: '0', PRIVATE: '1', PASSWORD: '2' };
const PRIVACY_BY_CODE = new Map<unknown, Privacy>(
  (Object.keys(PRIVACY_CODES) as Privacy[]).flatMap((privacy) => [
    [PRIVACY_CODES[privacy], privacy],
    [Number(PRIVACY_CODES[privacy]), privacy],
  ]),
);

/** An install that stores NULL (a create without `privacy`) treats it as public. */
function readPrivacy(value: unknown, path: string): Privacy {
  if (value === null) return 'PUBLIC';
  return PRIVACY_BY_CODE.get(value) ?? fail(path, 'a privacy code (0, 1 or 2)', value);
}

function readDomain(value: unknown, path: string): string {
  return typeof value === 'string' && value.trim() !== '' ? value : fail(path, 'a non-empty string', value);
}

/** One entry per line as the upstream stores it; some installs already send a list. null: none. */
function readLines(value: unknown, path: string): string[] {
  if (value === null) return [];
  let text: string;
  if (typeof value === 'string') {
    text = value;
  } else if (Array.isArray(value)) {
    text = value.map((line, index) => (typeof line === 'string' ? line : fail(itemPath(path, index), 'a string', line))).join('\n');
  } else {
    return fail(path, 'a newline-separated string or a list of strings', value);
  }
  // Splitting on \n and trimming also takes care of \r\n.
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

// ISO-8601 (with any number of fractional digits) or Laravel's "Y-m-d H:i:s"; no zone means UTC.
const TIMESTAMP =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[T ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.(?<fraction>\d+))?)?(?:Z|(?<sign>[+-])(?<offsetHours>\d{2})(?::?(?<offsetMinutes>\d{2}))?)?)?$/;

/** Timestamps read lately (a website's come with every read of it); '' for one that is none (lru-cache keeps no null). */
const timestamps = new LRUCache<string, string>({ max: 1_024 });

/** A timestamp is informative only: anything unreadable becomes null instead of failing the response. */
function readTimestamp(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const known = timestamps.get(value);
  if (known !== undefined) return known === '' ? null : known;
  const read = parseTimestamp(value);
  // Only what can be a timestamp is kept: a long string is read, never remembered.
  if (value.length <= 40) timestamps.set(value, read ?? '');
  return read;
}

function parseTimestamp(value: string): string | null {
  const parts = TIMESTAMP.exec(value)?.groups;
  if (parts === undefined) return null;
  const number = (key: string): number => Number(parts[key] ?? '0');
  const year = number('year');
  const month = number('month');
  const day = number('day');
  const hour = number('hour');
  const minute = number('minute');
  const second = number('second');
  const milliseconds = Number((parts.fraction ?? '').padEnd(3, '0').slice(0, 3));
  const wallClock = new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds));
  // Date.UTC rolls out-of-range parts over (Feb 30 -> Mar 1, 24:00 -> next day, year 50 -> 1950).
  const rolledOver =
    wallClock.getUTCFullYear() !== year ||
    wallClock.getUTCMonth() !== month - 1 ||
    wallClock.getUTCDate() !== day ||
    wallClock.getUTCHours() !== hour ||
    wallClock.getUTCMinutes() !== minute ||
    wallClock.getUTCSeconds() !== second;
  const offsetHours = number('offsetHours');
  const offsetMinutes = number('offsetMinutes');
  if (rolledOver || offsetHours > 23 || offsetMinutes > 59) return null;
  const offsetMs = (parts.sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(wallClock.getTime() - offsetMs).toISOString();
}

/** A reader for each way the wire carries a Website field (domain.ts's WEBSITE_FIELDS names one per field). */
const READERS: { [Type in keyof ReadTypes]: (value: unknown, path: string) => ReadTypes[Type] } = {
  id: readId,
  domain: readDomain,
  privacy: readPrivacy,
  flag: readFlag,
  optionalFlag: readOptionalFlag,
  lines: readLines,
  timestamp: readTimestamp,
};

type Reader = (value: unknown, path: string) => Website[keyof Website];

/** Each Website field with its wire name and its reader, worked out once. */
const WEBSITE_READERS = READ_FIELDS.map((name) => {
  const { wire, read } = WEBSITE_FIELDS[name];
  const reader: Reader = READERS[read.type];
  const reportedReader: Reader = (value, path) => readReported(value, path, reader);
  return { name, wire, read: 'reported' in read ? reportedReader : reader };
});

function readWebsite(raw: unknown, path: string): Website {
  const website = readObject(raw, path);
  const fields: Partial<Record<keyof Website, Website[keyof Website]>> = {};
  for (const { name, wire, read } of WEBSITE_READERS) fields[name] = read(website[wire], fieldPath(path, wire));
  return fields as Website;
}

/** A page's row: a plain one read as it is, any other through readStat with its path, built only then. */
function readStatRow(raw: unknown, rowsPath: string, index: number): Stat {
  if (isObject(raw)) {
    const { value, count } = raw;
    if (
      (typeof value === 'string' || typeof value === 'number') &&
      typeof count === 'number' &&
      Number.isSafeInteger(count) &&
      count >= 0
    ) {
      // -0 is read as 0, as readInteger does.
      return { value: typeof value === 'string' ? value : String(value), count: count === 0 ? 0 : count };
    }
  }
  return readStat(raw, itemPath(rowsPath, index));
}

function readStat(raw: unknown, path: string): Stat {
  const row = readObject(raw, path);
  const value = row.value;
  return {
    value:
      typeof value === 'string' || typeof value === 'number'
        ? String(value)
        : fail(fieldPath(path, 'value'), 'a string or a number', value),
    count: readInteger(row.count, fieldPath(path, 'count'), 0),
  };
}

export function decodeWebsite(raw: unknown): Website {
  return readWebsite(raw, '');
}

export function decodeWebsiteEnvelope(body: unknown): Website {
  const envelope = readObject(body, '');
  return envelope.data === undefined ? readWebsite(envelope, '') : readWebsite(envelope.data, 'data');
}

interface PageEnvelope {
  rows: unknown[];
  rowsPath: string;
  /** Paging numbers (current_page, per_page, last_page, total), and where they were found. */
  meta: JsonObject | undefined;
  metaPath: string;
  /** URLs of the neighbouring pages (next, last), and where they were found. */
  links: JsonObject | undefined;
  linksPath: string;
}

const PAGINATOR_FIELDS = ['current_page', 'last_page', 'per_page', 'total'];

/**
 * Three envelopes: a resource collection (`data`, `meta`, `links`), Laravel's plain paginator (the numbers and
 * `next_page_url`/`last_page_url` beside `data`), and a bare array or `data` alone.
 */
function readPageEnvelope(body: unknown): PageEnvelope {
  if (Array.isArray(body)) return { rows: body, rowsPath: 'body', meta: undefined, metaPath: '', links: undefined, linksPath: '' };
  const envelope = readObject(body, '');
  const rows = envelope.data;
  if (!Array.isArray(rows)) return fail('data', 'an array', rows);
  const plain = envelope.meta === undefined && PAGINATOR_FIELDS.some((key) => envelope[key] !== undefined);
  if (plain) {
    const links = { next: envelope.next_page_url, last: envelope.last_page_url };
    return { rows, rowsPath: 'data', meta: envelope, metaPath: '', links, linksPath: '' };
  }
  return {
    rows,
    rowsPath: 'data',
    meta: readOptionalObject(envelope.meta, 'meta'),
    metaPath: 'meta',
    // An array of page buttons tells nothing the numbers don't; only the object form is read.
    links: Array.isArray(envelope.links) ? undefined : readOptionalObject(envelope.links, 'links'),
    linksPath: 'links',
  };
}

function readMetaInteger(envelope: PageEnvelope, key: string, minimum: 0 | 1): number | undefined {
  const value = envelope.meta?.[key];
  return value === undefined || value === null ? undefined : readInteger(value, fieldPath(envelope.metaPath, key), minimum);
}

const LINK_NAMES: Record<string, string> = { next: 'next_page_url', last: 'last_page_url' };

function readLink(envelope: PageEnvelope, links: JsonObject, key: string): string | undefined {
  const value = links[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  const name = envelope.linksPath === '' ? (LINK_NAMES[key] ?? key) : `${envelope.linksPath}.${key}`;
  return fail(name, 'a URL string or null', value);
}

function pageParameter(url: string): number | undefined {
  // The base only serves links that are relative; absolute ones ignore it.
  const page = URL.parse(url, 'http://localhost/')?.searchParams.get('page');
  if (page === undefined || page === null || !/^\d+$/.test(page)) return undefined;
  const parsed = Number(page);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

type PagePosition = Pick<Page<unknown>, 'lastPage' | 'hasNextPage'>;

function positionFromLinks(envelope: PageEnvelope, links: JsonObject, page: number): PagePosition {
  const next = readLink(envelope, links, 'next');
  const last = readLink(envelope, links, 'last');
  const hasNextPage = next !== undefined && next !== '';
  const linkedLastPage = last === undefined ? undefined : pageParameter(last);
  return {
    hasNextPage,
    lastPage: linkedLastPage === undefined ? guessLastPage(page, hasNextPage) : Math.max(1, linkedLastPage),
  };
}

const guessLastPage = (page: number, hasNextPage: boolean): number => (hasNextPage ? page + 1 : page);

/** Each meta field present wins; a missing one falls back to the links, then to what was requested and arrived. */
function decodePage<T>(body: unknown, requested: PageRequest, readNode: (raw: unknown, rowsPath: string, index: number) => T): Page<T> {
  const envelope = readPageEnvelope(body);
  const { rows, rowsPath, links } = envelope;
  const nodes = rows.map((row, index) => readNode(row, rowsPath, index));
  const page = readMetaInteger(envelope, 'current_page', 1) ?? requested.page;
  const perPage = readMetaInteger(envelope, 'per_page', 1) ?? requested.perPage;
  const metaLastPage = readMetaInteger(envelope, 'last_page', 0);
  const metaTotal = readMetaInteger(envelope, 'total', 0);

  let position: PagePosition;
  if (metaLastPage !== undefined) {
    position = { lastPage: Math.max(1, metaLastPage), hasNextPage: page < metaLastPage };
  } else if (links !== undefined) {
    position = positionFromLinks(envelope, links, page);
  } else {
    const hasNextPage = nodes.length === perPage;
    position = { lastPage: guessLastPage(page, hasNextPage), hasNextPage };
  }
  // Without meta.total only a lower bound is known: the rows of the earlier pages plus this one's.
  const totalCount = metaTotal ?? (page - 1) * perPage + nodes.length;
  return { nodes, totalCount, page, perPage, ...position };
}

export function decodeWebsitePage(body: unknown, requested: PageRequest): Page<Website> {
  return decodePage(body, requested, (raw, rowsPath, index) => readWebsite(raw, itemPath(rowsPath, index)));
}

export function decodeStatPage(body: unknown, requested: PageRequest): Page<Stat> {
  return decodePage(body, requested, readStatRow);
}

/** Only for a 2xx answer: a missing `deleted` is true, unless the body's own `status` is not a 2xx. */
export function decodeDeletion(body: unknown, requestedId: string): Deletion {
  const answer = readObject(body, '');
  const id = answer.id === undefined || answer.id === null ? requestedId : readId(answer.id, 'id');
  if (answer.deleted !== undefined && answer.deleted !== null) return { id, deleted: readFlag(answer.deleted, 'deleted') };
  if (answer.status !== undefined && answer.status !== null) {
    const status = readInteger(answer.status, 'status', 0);
    if (status < 200 || status > 299) fail('status', 'a 2xx status when `deleted` is missing', answer.status);
  }
  return { id, deleted: true };
}

function readMessages(value: unknown): string[] {
  const messages = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return messages.filter((message): message is string => typeof message === 'string' && message.trim() !== '');
}

/** Never throws: an error body is read only to explain an error that is being reported anyway. */
export function decodeErrorBody(body: unknown): UpstreamErrorBody {
  if (!isObject(body)) return { message: null, fieldErrors: {} };
  const fieldErrors = new Map<string, string[]>();
  // The field map is in `message` on this API family and in `errors` on stock Laravel.
  for (const source of [body.message, body.errors]) {
    if (!isObject(source)) continue;
    for (const [fieldName, value] of Object.entries(source)) {
      const messages = readMessages(value);
      if (messages.length === 0) continue;
      fieldErrors.set(fieldName, [...new Set([...(fieldErrors.get(fieldName) ?? []), ...messages])]);
    }
  }
  const message = typeof body.message === 'string' && body.message.trim() !== '' ? body.message : null;
  // fromEntries defines properties, so a field named "__proto__" cannot reach the prototype.
  return { message, fieldErrors: Object.fromEntries(fieldErrors) };
}
