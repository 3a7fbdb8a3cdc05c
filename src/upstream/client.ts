// Everything HTTP about the upstream: the undici pool, timeouts, the circuit breaker and retries of idempotent
// reads (one exchange on the wire: exchange.ts; what a status or a socket error becomes: errors.ts).
// Callers get a parsed JSON body for a 2xx, or a GatewayError; never an upstream error page.
import { setTimeout as sleep } from 'node:timers/promises';
import CircuitBreaker from 'opossum';
import { Pool, type Dispatcher } from 'undici';
import { z } from 'zod';
import { type SettingsOf, custom, defaultsOf, integer, shown, splitUserinfo } from '../settings.js';
import type { RateLimit } from '../domain.js';
import { GatewayError } from '../errors.js';
import { BodyTooLargeError, errorCode, isRetryable, opensBreaker, statusError, timeoutError, transportError } from './errors.js';
import { exchange, type BodyPlan, type Exchange } from './exchange.js';
import { decodeErrorBody } from './wire.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface UpstreamRequest {
  method: HttpMethod;
  /** Below `/api/v1`, e.g. `/websites/3`. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** The caller's Authorization header value, forwarded unchanged. */
  authorization: string;
  /** Aborted when the caller goes away: the call in flight and a retry's wait stop. */
  signal?: AbortSignal;
  /** Date.now() by which the whole call, retries included, is over: no attempt starts after it. */
  deadline: number;
  /** What a 404 means for this call, e.g. "No website with id 3". */
  notFoundMessage?: string;
  /** Told what each answer's X-RateLimit-* headers say of the key's limit, when they say it. */
  onRateLimit?: (rateLimit: RateLimit) => void;
  /** Told when the call is over: for the request's own trace (X-Gateway-Trace). */
  observer?: CallObserver | undefined;
}

/** What one call reports when it is over: its attempts, the last status, the body's bytes. */
export interface CallObserver {
  end(attempts: number, status: number | 'error' | null, bytes: number | null): void;
}

export interface UpstreamResponse {
  status: number;
  body: unknown;
}

export interface UpstreamClient {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** The circuit breaker's state (reported by /ready, never deciding it). */
  breakerState(): 'closed' | 'open' | 'half-open';
  close(): Promise<void>;
}

/** How the gateway talks to the upstream: its address, timeouts, sockets, retries and breaker. */
export const UPSTREAM_TRANSPORT_SETTINGS = {
  url: custom('UPSTREAM_URL', upstreamUrlSchema(), {
    fallback: null,
    shown: null,
    unit: 'URL',
    doc: 'base URL of the analytics install; none: the embedded sandbox',
  }),
  connectTimeoutMs: integer('UPSTREAM_CONNECT_TIMEOUT_MS', {
    fallback: 5_000,
    min: 1,
    max: 600_000,
    unit: 'ms',
    doc: 'TCP/TLS connect timeout',
  }),
  timeoutMs: integer('UPSTREAM_TIMEOUT_MS', {
    fallback: 10_000,
    min: 1,
    max: 600_000,
    unit: 'ms',
    doc: 'time to the response headers, and longest pause in a body',
  }),
  connections: integer('UPSTREAM_CONNECTIONS', {
    fallback: 128,
    min: 1,
    max: 4096,
    unit: 'sockets',
    doc: 'keep-alive sockets to the upstream',
  }),
  maxAttempts: integer('UPSTREAM_MAX_ATTEMPTS', {
    fallback: 3,
    min: 1,
    max: 10,
    unit: 'attempts',
    doc: 'attempts of an idempotent read, the first included',
  }),
  maxResponseBytes: integer('UPSTREAM_MAX_RESPONSE_BYTES', {
    fallback: 4 * 1024 * 1024,
    min: 1024,
    max: 1024 ** 3,
    unit: 'bytes',
    doc: 'larger upstream answers are refused',
  }),
  breakerResetMs: integer('UPSTREAM_BREAKER_RESET_MS', {
    fallback: 5_000,
    min: 100,
    max: 600_000,
    unit: 'ms',
    doc: 'how long an open circuit fails fast',
  }),
};

export const UPSTREAM_TRANSPORT_DEFAULTS = defaultsOf(UPSTREAM_TRANSPORT_SETTINGS);

/** An absolute http(s) URL without credentials, query or fragment; a trailing /api/v1 dropped. */
function upstreamUrlSchema(): z.ZodType<string | null, string> {
  return z.string().transform((value, context) => {
    const refuse = (message: string): typeof z.NEVER => {
      context.addIssue({ code: 'custom', message: `UPSTREAM_URL ${message}` });
      return z.NEVER;
    };
    // The user info is cut before the URL is parsed: a password holding a `/`, `?`, `#` or space would
    // make a parser see another host, or no URL, and a refusal quote the password.
    const { userinfo, rest } = splitUserinfo(value);
    if (userinfo !== null)
      return refuse(`must not carry credentials (a user or password; an @ in its path is written %40), got "${shown(value)}"`);
    const parsed = URL.parse(rest);
    if (parsed === null) return refuse(`must be an absolute http(s) URL, got "${shown(value)}"`);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return refuse(`must use http or https, got "${parsed.protocol}"`);
    if (parsed.search || parsed.hash || parsed.username || parsed.password)
      return refuse('must not carry credentials, a query or a fragment');
    const prefix = parsed.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    return `${parsed.origin}${prefix}`;
  });
}

export interface UpstreamClientOptions extends Omit<SettingsOf<typeof UPSTREAM_TRANSPORT_SETTINGS>, 'url'> {
  /** Origin plus optional path prefix of the analytics install, without `/api/v1`. */
  url: string;
  /** Tests inject undici's MockAgent here; production uses a keep-alive Pool. */
  dispatcher?: Dispatcher;
  /** An attempt is over: its route template, its status (`error`: no answer), its seconds. */
  onAttemptDone?: (request: UpstreamRequest, route: string, status: number | 'error', seconds: number) => void;
  /** The circuit breaker opened (true), or closed or let a trial call through (false). */
  onBreakerChange?: (open: boolean) => void;
  /** A call starts (tracing: gateway.ts); what it answers follows the call's attempts to its end. */
  traceCall?: (method: HttpMethod, route: string) => UpstreamCallTrace;
  /** An attempt failed for the upstream's sake (no answer, a 5xx or a 429), with its cause, for the log. */
  onAttemptFailed?: (failure: UpstreamFailure) => void;
}

/** One upstream call as a trace sees it (a CLIENT span). */
export interface UpstreamCallTrace {
  /** Sent with every attempt: the W3C `traceparent` (and `tracestate`) of the call. */
  headers: Record<string, string>;
  /** The call is over: its attempts, and the last status (`error`: no answer; none when no attempt was made). */
  end(attempts: number, status: number | 'error' | null, failed: boolean): void;
}

/** What an attempt of a traced call reports back to it. */
interface AttemptTrace {
  headers: Record<string, string>;
  attempts: number;
  status: number | 'error' | null;
  /** The last answer's body bytes; null when none came. */
  bytes: number | null;
}

/** Why an upstream attempt failed, as an operator needs it: never the key, the query or an id. */
export interface UpstreamFailure {
  method: UpstreamRequest['method'];
  route: string;
  /** host:port of the upstream, the port always written out. */
  upstream: string;
  /** The socket, DNS, TLS or undici error code, when no answer came. */
  code?: string;
  /** The status, when the upstream answered. */
  status?: number;
}

/** The path with every segment after the resource's name as `{id}`: a label for metrics and spans, never an id. */
export function routeTemplate(path: string): string {
  const [resource = '', ...rest] = path.replace(/^\/+/, '').split('/');
  return `/api/v1/${[resource, ...rest.map(() => '{id}')].join('/')}`;
}

const NO_HEADERS: Record<string, string> = {};

const BACKOFF_BASE_MS = 50;
const BACKOFF_MAX_MS = 1_000;

/** The longest Retry-After waited out, holding an admission slot; past it, RATE_LIMITED at once, with `retryAfter`. */
const RATE_LIMIT_WAIT_MAX_MS = 1_000;

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const base = new URL(options.url);
  const origin = base.origin;
  const upstreamAddress = `${base.hostname}:${base.port || (base.protocol === 'https:' ? '443' : '80')}`;
  const failed = (request: UpstreamRequest, cause: { code?: string; status?: number }): void =>
    options.onAttemptFailed?.({ method: request.method, route: routeTemplate(request.path), upstream: upstreamAddress, ...cause });
  const apiPrefix = `${base.pathname.replace(/\/+$/, '')}/api/v1`;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Pool(origin, {
      connections: options.connections,
      connect: { timeout: options.connectTimeoutMs },
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });

  async function attempt(request: UpstreamRequest, trace?: AttemptTrace): Promise<UpstreamResponse> {
    const remaining = request.deadline - Date.now();
    if (remaining <= 0) throw timeoutError(request);
    const timeout = Math.min(options.timeoutMs, remaining);
    const onDone = options.onAttemptDone;
    const startedAt = onDone ? performance.now() : 0;
    if (trace) trace.attempts++;
    const done = (status: number | 'error'): void => {
      if (trace) trace.status = status;
      onDone?.(request, routeTemplate(request.path), status, (performance.now() - startedAt) / 1000);
    };

    let response: Exchange;
    try {
      response = await exchange(
        dispatcher,
        {
          origin,
          path: pathWithQuery(apiPrefix + request.path, request.query),
          method: request.method,
          headers: trace && trace.headers !== NO_HEADERS ? { ...requestHeaders(request), ...trace.headers } : requestHeaders(request),
          body: request.form ? new URLSearchParams(request.form).toString() : null,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        },
        (status) => bodyPlan(status, options.maxResponseBytes, request.deadline),
        request.signal,
      );
    } catch (error) {
      done('error');
      // A call its client cancelled is not the upstream's failure.
      if (!request.signal?.aborted) failed(request, { code: errorCode(error) ?? 'unknown' });
      throw transportError(error, request);
    }

    const { status, headers, text, failure } = response;
    if (trace) trace.bytes = response.bytes;
    done(status);
    if (status >= 500 || status === 429) failed(request, { status });
    const rateLimit = readRateLimit(headers);
    if (rateLimit !== null) request.onRateLimit?.(rateLimit);
    if (status >= 200 && status < 300) {
      if (failure !== null || text === null) {
        if (failure instanceof BodyTooLargeError) {
          throw new GatewayError(
            'UPSTREAM_BAD_RESPONSE',
            `The upstream answer is larger than the ${options.maxResponseBytes}-byte limit.`,
            { upstreamStatus: status },
          );
        }
        // A write answered 2xx has happened, whatever becomes of its body: say so with the status.
        if (request.method !== 'GET') {
          throw new GatewayError('UPSTREAM_BAD_RESPONSE', "The analytics service's answer broke off.", { upstreamStatus: status });
        }
        throw transportError(failure, request);
      }
      return { status, body: parseJson(text, status) };
    }

    // Only a 422's body is decoded (its validation messages); 5xx pages may hold HTML, stack traces or SQL.
    const errorBody = decodeErrorBody(status === 422 && text !== null ? parseJsonOrNull(text) : null);
    const retryAfterS = status === 429 ? parseRetryAfter(headerValue(headers['retry-after'])) : null;
    throw statusError(status, { retryAfterS, ...errorBody }, request);
  }

  // When the upstream is down, fail fast instead of piling up sockets and timeouts; after resetTimeout one
  // trial call decides. Only outages count (opensBreaker).
  const breaker = new CircuitBreaker(attempt, {
    timeout: false,
    resetTimeout: options.breakerResetMs,
    errorThresholdPercentage: 50,
    volumeThreshold: 10,
    rollingCountTimeout: 10_000,
    // Latency percentiles are computed on every call and nothing here reads them.
    rollingPercentilesEnabled: false,
    errorFilter: (error: unknown) => !opensBreaker(error),
  });
  if (options.onBreakerChange) {
    const onChange = options.onBreakerChange;
    breaker.on('open', () => onChange(true));
    breaker.on('halfOpen', () => onChange(false));
    breaker.on('close', () => onChange(false));
  }

  async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const callTrace = options.traceCall?.(request.method, routeTemplate(request.path));
    const { observer } = request;
    if (!callTrace && !observer) return sendAttempts(request);
    const trace: AttemptTrace = { headers: callTrace?.headers ?? NO_HEADERS, attempts: 0, status: null, bytes: null };
    let threw = true;
    try {
      const response = await sendAttempts(request, trace);
      threw = false;
      return response;
    } finally {
      callTrace?.end(trace.attempts, trace.status, threw);
      observer?.end(trace.attempts, trace.status, trace.bytes);
    }
  }

  // Not undici's retry interceptor: it resumes a broken body with a Range request (the install ignores it),
  // its attempts share one headers timeout, and it hides each attempt from the breaker, metrics and trace.
  async function sendAttempts(request: UpstreamRequest, trace?: AttemptTrace): Promise<UpstreamResponse> {
    // Writes are never retried: the upstream may have applied the first one.
    const maxAttempts = request.method === 'GET' ? options.maxAttempts : 1;
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        return await breaker.fire(request, trace);
      } catch (error) {
        if (errorCode(error) === 'EOPENBREAKER') {
          throw new GatewayError(
            'UPSTREAM_UNAVAILABLE',
            'The analytics service is failing; the gateway pauses calls to it for a few seconds.',
          );
        }
        const wait = retryDelay(error, attemptNo, maxAttempts, request.deadline);
        if (wait === null || request.signal?.aborted) throw error;
        try {
          await sleep(wait, undefined, request.signal ? { signal: request.signal } : undefined);
        } catch {
          throw error; // the caller left, or the deadline passed, while waiting: the last failure stands
        }
      }
    }
  }

  return {
    send,
    breakerState: () => (breaker.halfOpen ? 'half-open' : breaker.opened ? 'open' : 'closed'),
    async close() {
      breaker.shutdown();
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** How long to wait before the next attempt, or null when the error is final. */
function retryDelay(error: unknown, attemptNo: number, maxAttempts: number, deadline: number): number | null {
  if (attemptNo >= maxAttempts || !isRetryable(error)) return null;
  let wait: number;
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > RATE_LIMIT_WAIT_MAX_MS) return null;
    wait = error.retryAfterMs;
  } else {
    // Exponential backoff with jitter in [half, full], so synchronised clients spread out.
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attemptNo - 1));
    wait = ceiling / 2 + Math.random() * (ceiling / 2);
  }
  // Only retry when there is time left for the wait and a fair try after it.
  return Date.now() + wait + 10 < deadline ? wait : null;
}

function requestHeaders(request: UpstreamRequest): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: request.authorization,
  };
  if (request.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return headers;
}

/** Characters application/x-www-form-urlencoded leaves as they are (URLSearchParams's rule). */
const FORM_SAFE = /^[A-Za-z0-9*\-._]*$/;

export function pathWithQuery(path: string, query: UpstreamRequest['query']): string {
  if (!query) return path;
  let search = '';
  for (const name in query) {
    const value = query[name];
    if (value === undefined) continue;
    // Names, dates and numbers need no encoding: a URLSearchParams per value only for the others.
    const pair = FORM_SAFE.test(name) && FORM_SAFE.test(value) ? `${name}=${value}` : new URLSearchParams({ [name]: value }).toString();
    search += search === '' ? pair : `&${pair}`;
  }
  return search ? `${path}?${search}` : path;
}

/** Error bodies are read (4xx) or drained (others) up to this many bytes. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** 2xx: read, capped, within the deadline; 4xx: read for its messages; others: drained unread. */
function bodyPlan(status: number, maxResponseBytes: number, deadline: number): BodyPlan {
  if (status >= 200 && status < 300) return { read: true, limit: maxResponseBytes, deadline };
  return { read: status >= 400 && status < 500, limit: ERROR_BODY_LIMIT };
}

function parseJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Only here: trimming every body first cost more than parsing some of them.
    if (text.trim() === '') return null;
    throw new GatewayError('UPSTREAM_BAD_RESPONSE', 'The upstream answered with a body that is not valid JSON.', {
      upstreamStatus: status,
    });
  }
}

function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Laravel's throttle headers; null unless both are there and readable. */
export function readRateLimit(headers: Record<string, string | string[] | undefined>): RateLimit | null {
  const limit = headerValue(headers['x-ratelimit-limit'])?.trim();
  const remaining = headerValue(headers['x-ratelimit-remaining'])?.trim();
  if (limit === undefined || remaining === undefined || !/^\d{1,9}$/.test(limit) || !/^\d{1,9}$/.test(remaining)) return null;
  return { limit: Number(limit), remaining: Number(remaining) };
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}
