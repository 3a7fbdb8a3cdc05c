// The /api/v1 routes: route match, then the key, then the rate limit, then the handler, in
// Laravel's order (an unknown route is a 404 even without a key; a bad key is a 401 before
// anything else). Handlers validate everything before touching the store, so a rejected write
// changes nothing. Transport-free: a request object in, a status/headers/JSON value out. Where
// the older install (the 'legacy' dialect, docs/CONTRACT.md part C) answers otherwise, the handler
// asks the dialect.
import type { Dialect } from './dialect.js';
import { paginate, plainPaginate } from './pagination.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SandboxStore, WebsiteRecord } from './store.js';
import { wireOf } from './store.js';
import type { FieldErrors, Input, LenientRead } from './validation.js';
import {
  postedValues,
  readPage,
  validateLegacyListQuery,
  validateLegacyStatsQuery,
  validateListQuery,
  validateStatsQuery,
  validateStore,
  validateUpdate,
} from './validation.js';

export interface ApiRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v1/websites/3`. */
  path: string;
  query: Readonly<Record<string, string>>;
  /** Lower-cased names. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /** `http://host:port`, as the client addressed us; pagination links are built on it. */
  origin: string;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** A JSON value, or undefined for no body. */
  body: unknown;
  /** Sent as is, as text/html, instead of `body` (the login redirect's page). */
  html?: string;
}

export interface ApiContext {
  dialect: Dialect;
  store: SandboxStore;
  limiter: RateLimiter | null;
  /** Wall-clock milliseconds for created_at/updated_at (the sandbox's clock, pinned "today" included). */
  now(): number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse => ({ status, headers, body });
const notFound = (): ApiResponse => json(404, { message: 'Resource not found.', status: 404 });
const invalid = (errors: FieldErrors): ApiResponse => json(422, { message: errors, status: 422 });
/** What Laravel renders, for a client that wants JSON, when the code throws. */
const serverError = (): ApiResponse => json(500, { message: 'Server Error' });
/** firstOrFail() of the older install's update: Laravel renders the ModelNotFoundException's message. */
const modelNotFound = (): ApiResponse => json(404, { message: 'No query results for model [App\\Models\\Website].' });

interface Call {
  context: ApiContext;
  request: ApiRequest;
  userId: number;
  /** The `{id}` path segment, when the route has one. */
  param: string;
  /** The route's path, for pagination links. */
  routePath: string;
}
type Handler = (call: Call) => ApiResponse;

const ROUTES: readonly { pattern: RegExp; methods: Readonly<Record<string, Handler>> }[] = [
  { pattern: /^\/api\/v1\/websites$/, methods: { GET: listWebsites, POST: storeWebsite } },
  {
    pattern: /^\/api\/v1\/websites\/([^/]+)$/,
    methods: { GET: showWebsite, PUT: updateWebsite, PATCH: updateWebsite, DELETE: deleteWebsite },
  },
  { pattern: /^\/api\/v1\/stats\/([^/]+)$/, methods: { GET: showStats } },
];

export function handleApi(context: ApiContext, request: ApiRequest): ApiResponse {
  const path = request.path.length > 1 ? request.path.replace(/\/+$/, '') : request.path;
  const route = ROUTES.map((candidate) => ({ candidate, match: candidate.pattern.exec(path) })).find((r) => r.match);
  if (!route?.match) return notFound();
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const handler = route.candidate.methods[method];
  if (!handler) {
    const allowed = Object.keys(route.candidate.methods).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
    return json(
      405,
      {
        message: `The ${request.method} method is not supported for route ${path.slice(1)}. Supported methods: ${allowed.join(', ')}.`,
        status: 405,
      },
      { allow: allowed.join(', ') },
    );
  }

  const userId = authenticate(context, request.headers.authorization);
  if (userId === undefined) {
    // The older install's API guard falls back to the web one's answer: a client that does not
    // ask for JSON is sent to the login page.
    if (context.dialect === 'legacy' && !expectsJson(request.headers)) return loginRedirect(request.origin);
    return json(401, { message: 'Unauthenticated.' });
  }

  let rateHeaders: Record<string, string> = {};
  if (context.limiter) {
    const decision = context.limiter.attempt(bearerToken(request.headers.authorization) ?? '');
    rateHeaders = { 'x-ratelimit-limit': String(decision.limit), 'x-ratelimit-remaining': String(decision.remaining) };
    if (!decision.allowed) {
      return json(
        429,
        { message: 'Too Many Attempts.' },
        {
          ...rateHeaders,
          'retry-after': String(decision.retryAfter),
          'x-ratelimit-reset': String(decision.resetAt),
        },
      );
    }
  }

  const response = handler({ context, request, userId, param: decodeSegment(route.match[1] ?? ''), routePath: path });
  Object.assign(response.headers, rateHeaders);
  return response;
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function authenticate(context: ApiContext, header: string | undefined): number | undefined {
  const token = bearerToken(header);
  return token === undefined ? undefined : context.store.userIdForKey(token);
}

/**
 * Laravel's Request::expectsJson(): an XMLHttpRequest that accepts anything, or an Accept header
 * whose first (most preferred) type is JSON.
 */
export function expectsJson(headers: Readonly<Record<string, string>>): boolean {
  const accepted = (headers.accept ?? '')
    .split(',')
    .map((part, index) => {
      const [type = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = params.find((param) => param.startsWith('q='));
      return { type, index, quality: q === undefined ? 1 : Number(q.slice(2)) || 0 };
    })
    .filter((entry) => entry.type !== '')
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  const first = accepted[0]?.type;
  const wantsJson = first !== undefined && (first.includes('/json') || first.includes('+json'));
  const acceptsAnything = first === undefined || first === '*/*' || first === '*';
  const ajax = (headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest';
  return wantsJson || (ajax && acceptsAnything);
}

/** Laravel's redirect to the login route, its little HTML page included. */
function loginRedirect(origin: string): ApiResponse {
  const target = `${origin}/login`;
  const escaped = target.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/'/g, '&#039;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const html = [
    '<!DOCTYPE html>',
    '<html>',
    '    <head>',
    '        <meta charset="UTF-8" />',
    `        <meta http-equiv="refresh" content="0;url='${escaped}'" />`,
    '',
    `        <title>Redirecting to ${escaped}</title>`,
    '    </head>',
    '    <body>',
    `        Redirecting to <a href="${escaped}">${escaped}</a>.`,
    '    </body>',
    '</html>',
  ].join('\n');
  return { status: 302, headers: { location: target }, body: undefined, html };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The caller's website named by the path; undefined for non-numeric, unknown and others' ids alike. */
function ownWebsite(call: Call): WebsiteRecord | undefined {
  if (!/^\d{1,15}$/.test(call.param)) return undefined;
  return call.context.store.find(call.userId, Number(call.param));
}

/** Any user's website named by the path; undefined for non-numeric and unknown ids. */
function anyWebsite(call: Call): WebsiteRecord | undefined {
  if (!/^\d{1,15}$/.test(call.param)) return undefined;
  return call.context.store.findAny(Number(call.param));
}

/** Form bodies, and JSON bodies when the content type says so; a body that does not parse is empty. */
export function parseBody(request: ApiRequest): Input {
  const type = request.headers['content-type'] ?? '';
  if (/\bjson\b/i.test(type)) {
    try {
      const parsed: unknown = JSON.parse(request.body);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Input) : {};
    } catch {
      return {};
    }
  }
  const form: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(request.body)) form[key] = value;
  return form;
}

/** A read the older install could not handle is a 500; the contract's checks are 422s. */
function readQuery<T>(read: LenientRead<T>): { ok: true; value: T } | { ok: false; response: ApiResponse } {
  if (read.ok === true) return read;
  return { ok: false, response: read.ok === 'crash' ? serverError() : invalid(read.errors) };
}

function listWebsites(call: Call): ApiResponse {
  const { dialect, store } = call.context;
  const read = dialect === 'legacy' ? validateLegacyListQuery(call.request.query) : validateListQuery(call.request.query);
  const query = readQuery(read);
  if (!query.ok) return query.response;
  const rows = store.list(call.userId, query.value).map((website) => wireOf(dialect, website));
  return json(200, paginate(rows, readPage(call.request.query), query.value.perPage, call.request.origin + call.routePath));
}

function showWebsite(call: Call): ApiResponse {
  const website = ownWebsite(call);
  return website ? json(200, { data: wireOf(call.context.dialect, website), status: 200 }) : notFound();
}

function storeWebsite(call: Call): ApiResponse {
  const { dialect, store } = call.context;
  const input = parseBody(call.request);
  const fields = validateStore(input, (domain) => store.isDomainTaken(domain), dialect);
  if (!fields.ok) return invalid(fields.errors);
  const website = store.create(call.userId, fields.value, call.context.now());
  return json(201, { data: wireOf(dialect, website, postedValues(input)), status: 201 });
}

function updateWebsite(call: Call): ApiResponse {
  const { dialect } = call.context;
  const website = ownWebsite(call);
  if (!website) return dialect === 'legacy' ? modelNotFound() : notFound();
  const input = parseBody(call.request);
  const changes = validateUpdate(input, website.password !== null, dialect);
  if (!changes.ok) return invalid(changes.errors);
  call.context.store.update(website, changes.value, call.context.now());
  return json(200, { data: wireOf(dialect, website, postedValues(input)), status: 200 });
}

function deleteWebsite(call: Call): ApiResponse {
  const website = ownWebsite(call);
  if (!website) return notFound();
  call.context.store.delete(website);
  return json(200, { id: website.id, object: 'website', deleted: true, status: 200 });
}

function showStats(call: Call): ApiResponse {
  const { dialect, store } = call.context;
  // The older install looks the website up by id alone: any user's statistics are served.
  const website = dialect === 'legacy' ? anyWebsite(call) : ownWebsite(call);
  if (!website) return notFound();
  const read = dialect === 'legacy' ? validateLegacyStatsQuery(call.request.query) : validateStatsQuery(call.request.query);
  const query = readQuery(read);
  if (!query.ok) return query.response;
  const series = store.statsOf(website).get(query.value.name);
  const rows = series ? series.rows(query.value) : [];
  const page = readPage(call.request.query);
  const path = call.request.origin + call.routePath;
  // The older install returns the paginator itself rather than a resource collection.
  const body =
    dialect === 'legacy' ? plainPaginate(rows, page, query.value.perPage, path) : paginate(rows, page, query.value.perPage, path);
  return json(200, body);
}
