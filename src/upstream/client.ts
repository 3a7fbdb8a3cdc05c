// Everything HTTP about the upstream lives here: the undici pool, timeouts, the response size cap,
// retries of idempotent reads, and turning a status or a socket error into a GatewayError (one
// exchange on the wire, body caps and the caller's signal included: exchange.ts).
// Callers get a parsed JSON body for a 2xx, or a GatewayError; never an upstream error page.
import { setTimeout as sleep } from 'node:timers/promises';
import CircuitBreaker from 'opossum';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config.js';
import type { RateLimit } from '../domain.js';
import { GatewayError, type ErrorExtensions } from '../errors.js';
import { BodyTooLargeError, exchange, type BodyPlan, type Exchange } from './exchange.js';
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
  /**
   * Date.now() value by which the whole call, retries included, must be over: each attempt gets only
   * the time left for its headers and for any pause in its body, and none starts after it.
   */
  deadline: number;
  /** What a 404 means for this call, e.g. "No website with id 3". */
  notFoundMessage?: string;
  /** Called with what each answer's X-RateLimit-* headers say of the key's limit, when they say it. */
  onRateLimit?: (rateLimit: RateLimit) => void;
}

export interface UpstreamResponse {
  status: number;
  body: unknown;
}

export interface UpstreamClient {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

export interface UpstreamClientOptions extends Omit<UpstreamConfig, 'url' | 'statNames'> {
  url: string;
  /** Tests inject undici's MockAgent here; production uses a keep-alive Pool. */
  dispatcher?: Dispatcher;
  /** Called once per HTTP attempt (retries included), for metrics and logs. */
  onAttempt?: (request: UpstreamRequest) => void;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
/** Socket-level failures where a read may simply be sent again. */
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const BACKOFF_BASE_MS = 50;
const BACKOFF_MAX_MS = 1_000;

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const base = new URL(options.url);
  const origin = base.origin;
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

  async function attempt(request: UpstreamRequest): Promise<UpstreamResponse> {
    const remaining = request.deadline - Date.now();
    if (remaining <= 0) throw timeoutError(request);
    const timeout = Math.min(options.timeoutMs, remaining);
    options.onAttempt?.(request);

    let response: Exchange;
    try {
      response = await exchange(
        dispatcher,
        {
          origin,
          path: pathWithQuery(apiPrefix + request.path, request.query),
          method: request.method,
          headers: requestHeaders(request),
          body: request.form ? new URLSearchParams(request.form).toString() : null,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        },
        (status) => bodyPlan(status, options.maxResponseBytes, request.deadline),
        request.signal,
      );
    } catch (error) {
      throw transportError(error, request);
    }

    const { status, headers, text, failure } = response;
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
          throw new GatewayError('UPSTREAM_BAD_RESPONSE', 'The analytics service\'s answer broke off.', { upstreamStatus: status });
        }
        throw transportError(failure, request);
      }
      return { status, body: parseJson(text, status) };
    }

    // Error bodies are read only for 4xx (validation messages); 5xx pages are discarded unread,
    // since they may hold HTML, stack traces or SQL that must never reach a caller.
    const errorBody = text === null ? null : parseJsonOrNull(text);
    throw statusError(status, headerValue(headers['retry-after']), errorBody, request);
  }

  // When the upstream is down, fail fast for a while instead of piling up sockets and waiting on
  // timeouts; after resetTimeout one trial call decides whether it closes again. Only outages count:
  // a 404 or a 422 says nothing about the upstream's health.
  const breaker = new CircuitBreaker(attempt, {
    timeout: false,
    resetTimeout: options.breakerResetMs,
    errorThresholdPercentage: 50,
    volumeThreshold: 10,
    rollingCountTimeout: 10_000,
    // Latency percentiles are computed on every call and nothing here reads them.
    rollingPercentilesEnabled: false,
    errorFilter: (error: unknown) => !isOutage(error),
  });

  async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    // Writes are never retried: the upstream may have applied the first one.
    const maxAttempts = request.method === 'GET' ? options.maxAttempts : 1;
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        return await breaker.fire(request);
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
    async close() {
      breaker.shutdown();
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** Failures that say the upstream itself is unwell (not the caller's input, not the caller leaving). */
function isOutage(error: unknown): boolean {
  if (!(error instanceof GatewayError) || error instanceof ClientGoneError) return false;
  if (error.code === 'UPSTREAM_UNAVAILABLE' || error.code === 'UPSTREAM_TIMEOUT') return true;
  return error.code === 'UPSTREAM_ERROR' && (error.details.upstreamStatus ?? 500) >= 500;
}

/** The caller went away; its pending call was aborted. */
class ClientGoneError extends GatewayError {}

/** How long to wait before the next attempt, or null when the error is final. */
function retryDelay(error: unknown, attemptNo: number, maxAttempts: number, deadline: number): number | null {
  if (attemptNo >= maxAttempts || !(error instanceof UpstreamAttemptError)) return null;
  let wait: number;
  if (error.retryAfterMs !== undefined) {
    wait = error.retryAfterMs;
  } else {
    // Exponential backoff with jitter in [half, full], so synchronised clients spread out.
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attemptNo - 1));
    wait = ceiling / 2 + Math.random() * (ceiling / 2);
  }
  // Only retry when there is time left for the wait and a fair try after it.
  return Date.now() + wait + 10 < deadline ? wait : null;
}

/** A GatewayError that a read may retry: connection failures, 502/503/504, 429 with Retry-After. */
class UpstreamAttemptError extends GatewayError {
  retryAfterMs: number | undefined;
  constructor(code: ConstructorParameters<typeof GatewayError>[0], message: string, details: ErrorExtensions, retryAfterMs?: number) {
    super(code, message, details);
    this.retryAfterMs = retryAfterMs;
  }
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

function statusError(status: number, retryAfter: string | undefined, body: unknown, request: UpstreamRequest): GatewayError {
  const upstreamStatus = status;
  switch (status) {
    case 401:
      return new GatewayError('UNAUTHENTICATED', 'The analytics service rejected the API key.', { upstreamStatus });
    case 403:
      return new GatewayError('FORBIDDEN', 'The API key may not access this resource.', { upstreamStatus });
    case 404:
      return new GatewayError('NOT_FOUND', request.notFoundMessage ?? 'Not found.', { upstreamStatus });
    case 422: {
      const decoded = decodeErrorBody(body);
      const messages = Object.values(decoded.fieldErrors).flat();
      const message = messages.length > 0 ? messages.join(' ') : (decoded.message ?? 'The analytics service refused the input.');
      return new GatewayError('BAD_USER_INPUT', message, { upstreamStatus, fieldErrors: decoded.fieldErrors });
    }
    case 429: {
      const seconds = parseRetryAfter(retryAfter) ?? 60;
      return new UpstreamAttemptError(
        'RATE_LIMITED',
        `The analytics service is rate limiting this API key; retry in ${seconds} s.`,
        { upstreamStatus, retryAfter: seconds },
        seconds * 1000,
      );
    }
  }
  if (RETRYABLE_STATUS.has(status)) {
    return new UpstreamAttemptError('UPSTREAM_ERROR', `The analytics service failed (HTTP ${status}).`, { upstreamStatus });
  }
  return new GatewayError('UPSTREAM_ERROR', `The analytics service failed (HTTP ${status}).`, { upstreamStatus });
}

function timeoutError(request: UpstreamRequest): GatewayError {
  if (request.method === 'GET') {
    return new GatewayError('UPSTREAM_TIMEOUT', 'The analytics service did not answer in time.');
  }
  return new GatewayError(
    'UPSTREAM_TIMEOUT',
    'The analytics service did not answer in time; the change may or may not have been applied: read it back before retrying.',
    { outcome: 'UNKNOWN' },
  );
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // An aborted call rejects with a DOMException, which has a name (AbortError, TimeoutError) and no code.
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

function transportError(error: unknown, request: UpstreamRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = errorCode(error);
  if (request.signal?.aborted) return new ClientGoneError('UPSTREAM_UNAVAILABLE', 'The request was cancelled by the client.');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'TimeoutError' || code === 'UND_ERR_ABORTED' || code === 'AbortError') {
    return timeoutError(request);
  }
  const sent = code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN' && code !== 'UND_ERR_CONNECT_TIMEOUT';
  if (request.method !== 'GET' && sent) {
    return new GatewayError(
      'UPSTREAM_UNAVAILABLE',
      'The connection to the analytics service broke after the change was sent; it may or may not have been applied: read it back before retrying.',
      { outcome: 'UNKNOWN' },
    );
  }
  if (code !== undefined && CONNECTION_ERRORS.has(code)) {
    const message = sent ? 'The connection to the analytics service broke.' : 'The analytics service cannot be reached.';
    return new UpstreamAttemptError('UPSTREAM_UNAVAILABLE', message, {});
  }
  return new GatewayError('UPSTREAM_BAD_RESPONSE', 'The analytics service sent a response that could not be read.');
}
