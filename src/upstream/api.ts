// The six REST operations of docs/CONTRACT.md as typed functions: domain values in, domain values out.
// Request building (query strings, forms) is pure and exported for tests; decoding is in wire.ts.
import {
  WEBSITE_FIELDS,
  WRITE_FIELDS,
  type Deletion,
  type Page,
  type Stat,
  type StatsQuery,
  type Website,
  type WebsiteListQuery,
  type WebsiteWrite,
  type WriteTypes,
} from '../domain.js';
import { GatewayError } from '../errors.js';
import type { UpstreamRequest, UpstreamResponse } from './client.js';
import type { StatNames } from './dialect.js';
import { WireDecodeError, answeredForAnother, appliedButUnread, unreadableAnswer, wasWriteApplied } from './errors.js';
import { PRIVACY_CODES, decodeDeletion, decodeStatPage, decodeWebsiteEnvelope, decodeWebsitePage } from './wire.js';

/** An upstream call already bound to the caller's key, cancellation and deadline. */
export type Send = (request: Omit<UpstreamRequest, 'authorization' | 'signal' | 'deadline'>) => Promise<UpstreamResponse>;

/** Upstream form/query names -> the names our schema gives them, for error messages. */
const UPSTREAM_FIELD_NAMES: Record<string, string> = {
  ...Object.fromEntries(WRITE_FIELDS.map((name) => [WEBSITE_FIELDS[name].wire, name])),
  name: 'name',
  from: 'from',
  to: 'to',
  search: 'search',
  search_by: 'search',
  sort_by: 'sortBy',
  sort: 'sort',
  per_page: 'perPage',
  page: 'page',
};

const PRIVACY_NAMES: Record<string, string> = Object.fromEntries(Object.entries(PRIVACY_CODES).map(([name, code]) => [code, name]));
/** Laravel writes a form name's underscore as a space in its messages. */
const LARAVEL_ATTRIBUTE = new RegExp(`\\bThe (${Object.keys(UPSTREAM_FIELD_NAMES).join('|').replaceAll('_', '[ _]')}) field\\b`, 'g');

/** A validation message in the schema's terms: Laravel names fields and values as the form does. */
export function inSchemaTerms(message: string): string {
  return message
    .replace(/\bprivacy is ([012])\b/g, (_, code: string) => `privacy is ${PRIVACY_NAMES[code] ?? code}`)
    .replace(LARAVEL_ATTRIBUTE, (_, name: string) => `The ${UPSTREAM_FIELD_NAMES[name.replace(' ', '_')] ?? name} field`);
}

/** Sends, and puts the fields and messages of an upstream 422 in the terms our schema uses. */
async function call(send: Send, request: Parameters<Send>[0]): Promise<unknown> {
  try {
    return (await send(request)).body;
  } catch (error) {
    if (error instanceof GatewayError && error.details.fieldErrors) {
      const renamed = Object.fromEntries(
        Object.entries(error.details.fieldErrors).map(([field, messages]) => [
          UPSTREAM_FIELD_NAMES[field] ?? field,
          messages.map(inSchemaTerms),
        ]),
      );
      throw new GatewayError(error.code, inSchemaTerms(error.message), { ...error.details, fieldErrors: renamed });
    }
    throw error;
  }
}

function decoded<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    throw error instanceof WireDecodeError ? unreadableAnswer(error) : error;
  }
}

const flag = (value: boolean): string => (value ? '1' : '0');

export function websiteListParams(query: WebsiteListQuery): Record<string, string | undefined> {
  return {
    search: query.search,
    search_by: query.search === undefined ? undefined : 'domain',
    favorite: query.favorite === undefined ? undefined : flag(query.favorite),
    sort_by: query.sortBy,
    sort: query.sort,
    per_page: String(query.perPage),
    page: String(query.page),
  };
}

/** `wireName`: what this install calls the statistic (dialect.ts). */
export function statsParams(query: StatsQuery, wireName: string): Record<string, string | undefined> {
  return {
    name: wireName,
    from: query.from,
    to: query.to,
    search: query.search,
    search_by: query.search === undefined ? undefined : 'value',
    sort_by: query.sortBy,
    sort: query.sort,
    per_page: String(query.perPage),
    page: String(query.page),
  };
}

/** How a write sends each type of Website field (domain.ts's WEBSITE_FIELDS names one per field). */
const ENCODERS: { [Type in keyof WriteTypes]: (value: WriteTypes[Type]) => string } = {
  domain: (domain) => domain,
  password: (password) => password,
  privacy: (privacy) => PRIVACY_CODES[privacy],
  flag,
  lines: (lines) => lines.join('\n'),
};

const encode = <Type extends keyof WriteTypes>(type: Type, value: WriteTypes[Type]): string => ENCODERS[type](value);

/** A website write as the upstream's form: only the fields the caller gave; an empty list clears the field. */
export function toWebsiteForm(write: WebsiteWrite): Record<string, string> {
  const form: Record<string, string> = {};
  for (const name of WRITE_FIELDS) {
    const value = write[name];
    const field = WEBSITE_FIELDS[name];
    if (value !== undefined) form[field.wire] = encode(field.write.type, value);
  }
  return form;
}

const notFound = (id: string): string => `No website with id ${id}.`;

/** A website answered for another id is not passed off as the one asked for (nor cached under its id). */
export async function fetchWebsite(send: Send, id: string): Promise<Website> {
  const body = await call(send, { method: 'GET', path: `/websites/${id}`, notFoundMessage: notFound(id) });
  const website = decoded(() => decodeWebsiteEnvelope(body));
  if (website.id !== id)
    throw new GatewayError('UPSTREAM_BAD_RESPONSE', `The analytics service answered website ${id} with website ${website.id}.`);
  return website;
}

/** An install without favorites ignores the filter: a list that does not match it is refused, not passed off. */
export async function fetchWebsitePage(send: Send, query: WebsiteListQuery): Promise<Page<Website>> {
  const body = await call(send, { method: 'GET', path: '/websites', query: websiteListParams(query) });
  const page = decoded(() => decodeWebsitePage(body, query));
  if (query.favorite !== undefined && page.nodes.some((website) => website.favorite !== query.favorite)) {
    throw new GatewayError('UNSUPPORTED', 'This analytics install does not keep favorites, so it cannot filter by them.', {
      argument: 'favorite',
    });
  }
  return page;
}

export function fetchStatPage(send: Send, names: StatNames, query: StatsQuery): Promise<Page<Stat>> {
  return names.read(query.name, async (wireName) => {
    const body = await call(send, {
      method: 'GET',
      path: `/stats/${query.websiteId}`,
      query: statsParams(query, wireName),
      notFoundMessage: notFound(query.websiteId),
    });
    return decoded(() => decodeStatPage(body, query));
  });
}

/** A 2xx write is a success whatever its body: unreadable, the website is read back (else outcome APPLIED). */
async function writeWebsite(send: Send, request: Parameters<Send>[0], readBack: () => Promise<Website>, id?: string): Promise<Website> {
  let website: Website;
  try {
    website = decodeWebsiteEnvelope(await call(send, request));
  } catch (error) {
    if (!wasWriteApplied(error) && !(error instanceof WireDecodeError)) throw error;
    try {
      return await readBack();
    } catch {
      throw appliedButUnread();
    }
  }
  if (id !== undefined && website.id !== id) throw answeredForAnother('update', id, website.id);
  return website;
}

/** A new website is found by its domain, which the upstream keeps unique; the newest comes first. */
async function findByDomain(send: Send, domain: string): Promise<Website> {
  const page = await fetchWebsitePage(send, { search: domain, sortBy: 'id', sort: 'desc', perPage: 100, page: 1 });
  const website = page.nodes.find((node) => node.domain === domain);
  if (website === undefined) throw new GatewayError('NOT_FOUND', `No website with domain ${domain}.`);
  return website;
}

/** `write.domain` must be normalised as the upstream stores it (validate.ts), so it can be found again. */
export function storeWebsite(send: Send, write: WebsiteWrite): Promise<Website> {
  return writeWebsite(send, { method: 'POST', path: '/websites', form: toWebsiteForm(write) }, () =>
    findByDomain(send, write.domain ?? ''),
  );
}

export function patchWebsite(send: Send, id: string, write: WebsiteWrite): Promise<Website> {
  const request = { method: 'PATCH', path: `/websites/${id}`, form: toWebsiteForm(write), notFoundMessage: notFound(id) } as const;
  return writeWebsite(send, request, () => fetchWebsite(send, id), id);
}

/** A 2xx says the website is gone, even when its body cannot be read; not when it names another website. */
export async function destroyWebsite(send: Send, id: string): Promise<Deletion> {
  let body: unknown;
  try {
    body = await call(send, { method: 'DELETE', path: `/websites/${id}`, notFoundMessage: notFound(id) });
  } catch (error) {
    if (wasWriteApplied(error)) return { id, deleted: true };
    throw error;
  }
  const deletion = decoded(() => decodeDeletion(body, id));
  if (deletion.id !== id) throw answeredForAnother('deletion', id, deletion.id);
  return deletion;
}
