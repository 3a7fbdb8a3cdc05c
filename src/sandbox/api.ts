// The /api/v1 routes: route match, then the key, then the rate limit, then the handler, in
// Laravel's order (an unknown route is a 404 even without a key; a bad key is a 401 before
// anything else). Handlers validate everything before touching the store, so a rejected write
// changes nothing. Transport-free: a request object in, a status/headers/JSON value out.
import { paginate } from './pagination.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SandboxStore, WebsiteRecord } from './store.js';
import { toWire } from './store.js';
import type { FieldErrors, Input } from './validation.js';
import { readPage, validateListQuery, validateStatsQuery, validateStore, validateUpdate } from './validation.js';

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
}

export interface ApiContext {
  store: SandboxStore;
  limiter: RateLimiter | null;
  /** Wall-clock milliseconds for created_at/updated_at (the sandbox's clock, pinned "today" included). */
  now(): number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse => ({ status, headers, body });
const notFound = (): ApiResponse => json(404, { message: 'Resource not found.', status: 404 });
const invalid = (errors: FieldErrors): ApiResponse => json(422, { message: errors, status: 422 });

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
  if (userId === undefined) return json(401, { message: 'Unauthenticated.' });

  let rateHeaders: Record<string, string> = {};
  if (context.limiter) {
    const decision = context.limiter.attempt(bearerToken(request.headers.authorization) ?? '');
    rateHeaders = { 'x-ratelimit-limit': String(decision.limit), 'x-ratelimit-remaining': String(decision.remaining) };
    if (!decision.allowed) {
      return json(429, { message: 'Too Many Attempts.' }, {
        ...rateHeaders,
        'retry-after': String(decision.retryAfter),
        'x-ratelimit-reset': String(decision.resetAt),
      });
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

function listWebsites(call: Call): ApiResponse {
  const query = validateListQuery(call.request.query);
  if (!query.ok) return invalid(query.errors);
  const rows = call.context.store.list(call.userId, query.value).map(toWire);
  return json(200, paginate(rows, readPage(call.request.query), query.value.perPage, call.request.origin + call.routePath));
}

function showWebsite(call: Call): ApiResponse {
  const website = ownWebsite(call);
  return website ? json(200, { data: toWire(website), status: 200 }) : notFound();
}

function storeWebsite(call: Call): ApiResponse {
  const { store } = call.context;
  const fields = validateStore(parseBody(call.request), (domain) => store.isDomainTaken(domain));
  if (!fields.ok) return invalid(fields.errors);
  const website = store.create(call.userId, fields.value, call.context.now());
  return json(201, { data: toWire(website), status: 201 });
}

function updateWebsite(call: Call): ApiResponse {
  const website = ownWebsite(call);
  if (!website) return notFound();
  const changes = validateUpdate(parseBody(call.request), website.password !== null);
  if (!changes.ok) return invalid(changes.errors);
  call.context.store.update(website, changes.value, call.context.now());
  return json(200, { data: toWire(website), status: 200 });
}

function deleteWebsite(call: Call): ApiResponse {
  const website = ownWebsite(call);
  if (!website) return notFound();
  call.context.store.delete(website);
  return json(200, { id: website.id, object: 'website', deleted: true, status: 200 });
}

function showStats(call: Call): ApiResponse {
  const website = ownWebsite(call);
  if (!website) return notFound();
  const query = validateStatsQuery(call.request.query);
  if (!query.ok) return invalid(query.errors);
  const series = call.context.store.statsOf(website).get(query.value.name);
  const rows = series ? series.rows(query.value) : [];
  return json(200, paginate(rows, readPage(call.request.query), query.value.perPage, call.request.origin + call.routePath));
}
