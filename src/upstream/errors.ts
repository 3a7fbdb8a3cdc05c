// Every upstream error in one module: the classes, how a status or a socket error becomes a GatewayError,
// and each decision taken on an error, made here only, so that the client, the cache, the statistic names
// and the writes cannot drift apart by accident.
import type { StatName } from '../domain.js';
import { GatewayError, type ErrorCode, type ErrorExtensions } from '../errors.js';

/** What the mapping needs of an upstream call: its method, the caller's signal, what a 404 means. */
export interface CallShape {
  method: string;
  signal?: AbortSignal | undefined;
  notFoundMessage?: string | undefined;
}

/** A body the decoders cannot read; the message names the path in the body (wire.ts). */
export class WireDecodeError extends Error {
  override name = 'WireDecodeError';
}

/** The body is over the plan's limit (by its Content-Length, or as it arrived): exchange.ts. */
export class BodyTooLargeError extends Error {}

/** The deadline passed while the body was arriving; the code undici gives its own body timeout. */
export class DeadlinePassedError extends Error {
  code = 'UND_ERR_BODY_TIMEOUT';
}

/** The caller went away; its pending call was aborted. */
export class ClientGoneError extends GatewayError {}

/** A GatewayError that a read may retry: connection failures, 502/503/504, 429 with Retry-After. */
export class RetryableError extends GatewayError {
  retryAfterMs: number | undefined;
  constructor(code: ErrorCode, message: string, details: ErrorExtensions, retryAfterMs?: number) {
    super(code, message, details);
    this.retryAfterMs = retryAfterMs;
  }
}

// ---- Decisions: one rule each ----

/** Counts against the circuit breaker: the upstream itself is unwell, not the caller; a 429 throttles one key. */
export function opensBreaker(error: unknown): boolean {
  if (!(error instanceof GatewayError) || error instanceof ClientGoneError) return false;
  if (error.code === 'UPSTREAM_UNAVAILABLE' || error.code === 'UPSTREAM_TIMEOUT') return true;
  return error.code === 'UPSTREAM_ERROR' && (error.details.upstreamStatus ?? 500) >= 500;
}

/** The upstream answered that it has no statistic by that name (a 422 on `name`): dialect.ts tries the other. */
export function isStatNameRefused(error: unknown): boolean {
  return error instanceof GatewayError && error.code === 'BAD_USER_INPUT' && error.details.fieldErrors?.name !== undefined;
}

const statusOf = (error: unknown): number => (error instanceof GatewayError ? (error.details.upstreamStatus ?? 0) : 0);

/** The upstream refused a write (a 4xx): it changed nothing, so nothing cached needs dropping. */
export const wasWriteRefused = (error: unknown): boolean => statusOf(error) >= 400 && statusOf(error) < 500;

/** The install answered the call with a status (whatever it was): it was sent, and reached it. */
export const installAnswered = (error: unknown): boolean => statusOf(error) !== 0;

/** The upstream answered a write 2xx: it was applied, even though its body could not be read whole. */
export const wasWriteApplied = (error: unknown): boolean => statusOf(error) >= 200 && statusOf(error) < 300;

/** The write's input was refused in terms the caller can fix: no such website, or fields the upstream names (a 422). */
export function isInputRefused(error: unknown): error is GatewayError {
  if (!(error instanceof GatewayError)) return false;
  return error.code === 'NOT_FOUND' || (error.code === 'BAD_USER_INPUT' && error.details.fieldErrors !== undefined);
}

/** A read may be sent again after this failure (client.ts decides whether there is time). */
export const isRetryable = (error: unknown): error is RetryableError => error instanceof RetryableError;

// ---- Statuses and socket errors as gateway errors ----

const RETRYABLE_STATUS = new Set([502, 503, 504]);
/** A call that timed out: undici's timeouts, and the name of an aborted call's DOMException. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'TimeoutError', 'UND_ERR_ABORTED', 'AbortError']);
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

/** A non-2xx answer; `fieldErrors` and `message` are a 422's decoded body. */
export function statusError(
  status: number,
  answer: { retryAfterS: number | null; fieldErrors: Record<string, string[]>; message: string | null },
  call: CallShape,
): GatewayError {
  const upstreamStatus = status;
  switch (status) {
    case 401:
      return new GatewayError('UNAUTHENTICATED', 'The analytics service rejected the API key.', { upstreamStatus });
    case 403:
      return new GatewayError('FORBIDDEN', 'The API key may not access this resource.', { upstreamStatus });
    case 404:
      return new GatewayError('NOT_FOUND', call.notFoundMessage ?? 'Not found.', { upstreamStatus });
    case 422: {
      const messages = Object.values(answer.fieldErrors).flat();
      const message = messages.length > 0 ? messages.join(' ') : (answer.message ?? 'The analytics service refused the input.');
      return new GatewayError('BAD_USER_INPUT', message, { upstreamStatus, fieldErrors: answer.fieldErrors });
    }
    case 429: {
      const seconds = answer.retryAfterS ?? 60;
      return new RetryableError(
        'RATE_LIMITED',
        `The analytics service is rate limiting this API key; retry in ${seconds} s.`,
        { upstreamStatus, retryAfter: seconds },
        seconds * 1000,
      );
    }
  }
  if (RETRYABLE_STATUS.has(status)) {
    return new RetryableError('UPSTREAM_ERROR', `The analytics service failed (HTTP ${status}).`, { upstreamStatus });
  }
  return new GatewayError('UPSTREAM_ERROR', `The analytics service failed (HTTP ${status}).`, { upstreamStatus });
}

export function timeoutError(call: CallShape): GatewayError {
  if (call.method === 'GET') {
    return new GatewayError('UPSTREAM_TIMEOUT', 'The analytics service did not answer in time.');
  }
  return new GatewayError(
    'UPSTREAM_TIMEOUT',
    'The analytics service did not answer in time; the change may or may not have been applied: read it back before retrying.',
    { outcome: 'UNKNOWN' },
  );
}

/** The code of a socket or undici error, or the name of an aborted call's DOMException. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // An aborted call rejects with a DOMException, which has a name (AbortError, TimeoutError) and no code.
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/** A call that got no answer (or whose body broke off): the caller left, a timeout, or the connection. */
export function transportError(error: unknown, call: CallShape): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = errorCode(error);
  if (call.signal?.aborted) return new ClientGoneError('UPSTREAM_UNAVAILABLE', 'The request was cancelled by the client.');
  if (code !== undefined && TIMEOUT_CODES.has(code)) return timeoutError(call);
  const sent = code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN' && code !== 'UND_ERR_CONNECT_TIMEOUT';
  if (call.method !== 'GET' && sent) {
    return new GatewayError(
      'UPSTREAM_UNAVAILABLE',
      'The connection to the analytics service broke after the change was sent; it may or may not have been applied: read it back before retrying.',
      { outcome: 'UNKNOWN' },
    );
  }
  if (code !== undefined && CONNECTION_ERRORS.has(code)) {
    const message = sent ? 'The connection to the analytics service broke.' : 'The analytics service cannot be reached.';
    return new RetryableError('UPSTREAM_UNAVAILABLE', message, {});
  }
  return new GatewayError('UPSTREAM_BAD_RESPONSE', 'The analytics service sent a response that could not be read.');
}

/** A body the decoders refused. The detail names a path in the upstream body, which helps an operator and leaks no data. */
export const unreadableAnswer = (error: WireDecodeError): GatewayError =>
  new GatewayError('UPSTREAM_BAD_RESPONSE', `The analytics service sent an unexpected answer (${error.message}).`);

/** A write of website `id` answered 2xx for another website: what was changed is unknown. */
export function answeredForAnother(write: 'update' | 'deletion', id: string, answeredId: string): GatewayError {
  const done = write === 'update' ? 'changed' : 'deleted';
  return new GatewayError(
    'UPSTREAM_BAD_RESPONSE',
    `The analytics service answered the ${write} of website ${id} with website ${answeredId}: whether website ${id} was ${done} is unknown; read it again before going on.`,
    { outcome: 'UNKNOWN' },
  );
}

/** A write answered 2xx whose answer could not be read, nor the website read back. */
export const appliedButUnread = (): GatewayError =>
  new GatewayError(
    'UPSTREAM_BAD_RESPONSE',
    "The change was applied, but the analytics service's answer could not be read, nor the website read back: reload it before changing it again.",
    { outcome: 'APPLIED' },
  );

/** A statistic this install does not keep (dialect.ts found no name it accepts). */
export const unsupportedStat = (name: StatName): GatewayError =>
  new GatewayError('UNSUPPORTED', `This analytics install has no statistic ${name.toUpperCase()}.`);
