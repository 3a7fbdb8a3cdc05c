import { GraphQLError } from 'graphql';

/** Every `extensions.code` a client can see, yoga's too: docs/errors.md is checked against it. */
export const ERROR_CODES = {
  UNAUTHENTICATED: 'no Authorization: Bearer <key> header, a malformed one, or the service refused the key (401)',
  FORBIDDEN: 'the service answered 403',
  NOT_FOUND: 'no website with that id for this key',
  BAD_USER_INPUT: 'an argument was refused by the gateway (the whole operation), or the service answered 422',
  RATE_LIMITED: "the service answered 429 and its Retry-After does not fit in the request's deadline",
  UPSTREAM_TIMEOUT: 'the service did not answer in time',
  UPSTREAM_UNAVAILABLE: 'the service cannot be reached, or the connection broke',
  UPSTREAM_ERROR: 'the service failed (5xx, or another unexpected status)',
  UPSTREAM_BAD_RESPONSE: 'the answer was not JSON, was cut short or too large, or did not have the expected shape',
  UNSUPPORTED: 'this install lacks the feature (a statistic it does not keep, the favorite filter)',
  PERSISTED_QUERY_NOT_FOUND: 'a hash-only request for a document the gateway does not have',
  PERSISTED_QUERY_MISMATCH: 'a document sent with a hash that is not its SHA-256',
  PERSISTED_QUERY_ONLY: 'TRUSTED_DOCUMENTS_ONLY is on and the document is not in the manifest',
  FIELD_LIMIT_EXCEEDED: 'the document selects more than MAX_FIELDS fields, fragments expanded',
  COST_LIMIT_EXCEEDED: 'the operation could make more upstream calls than MAX_COST',
  DEPTH_LIMIT_EXCEEDED: 'an operation nests fields deeper than MAX_DEPTH',
  ALIAS_LIMIT_EXCEEDED: 'an operation has more aliases than MAX_ALIASES',
  DIRECTIVE_LIMIT_EXCEEDED: 'an operation has more directives than MAX_DIRECTIVES',
  TOKEN_LIMIT_EXCEEDED: 'the document has more than MAX_TOKENS tokens',
  BODY_LIMIT_EXCEEDED: 'HTTP 413: the request body is larger than MAX_BODY_BYTES',
  LENGTH_REQUIRED: 'HTTP 411: a chunked POST without Content-Length',
  OPERATION_NAME_REQUIRED: 'the document holds several operations and the request names none',
  OPERATION_NOT_FOUND: 'operationName names no operation of the document, or it holds none',
  GRAPHQL_PARSE_FAILED: 'the text is not GraphQL (yoga)',
  GRAPHQL_VALIDATION_FAILED: 'the document does not fit the schema (yoga)',
  REQUEST_TIMEOUT: "HTTP 408: the request's headers and body did not arrive within REQUEST_RECEIVE_TIMEOUT_MS",
  OVERLOADED: 'HTTP 503: too many requests in line, or too many live streams',
  NOT_ACCEPTABLE: 'HTTP 406: a subscription asked for with an Accept that rules out an event stream',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorExtensions {
  upstreamStatus?: number;
  /** RATE_LIMITED: seconds. */
  retryAfter?: number;
  /** BAD_USER_INPUT: the argument (path) that was refused. */
  argument?: string;
  /** From an upstream 422: field -> messages, field names as in our schema. */
  fieldErrors?: Record<string, string[]>;
  /** A write's. UNKNOWN: it failed after it was sent. APPLIED: a 2xx whose answer (and a read back) failed. */
  outcome?: 'UNKNOWN' | 'APPLIED';
}

/** A GraphQLError with a code, which yoga's masking lets through; anything unexpected is masked. */
export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  readonly details: ErrorExtensions;

  constructor(code: ErrorCode, message: string, details: ErrorExtensions = {}) {
    super(message, { extensions: { code, ...details } });
    this.name = 'GatewayError';
    this.code = code;
    this.details = details;
  }
}

export function isGatewayError(error: unknown, code?: ErrorCode): error is GatewayError {
  return error instanceof GatewayError && (code === undefined || error.code === code);
}

/** A stale cache entry may answer instead; unlike the breaker, a 429 counts (the upstream only throttles). */
export function mayAnswerStale(error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  if (error.code === 'RATE_LIMITED' || error.code === 'UPSTREAM_TIMEOUT' || error.code === 'UPSTREAM_UNAVAILABLE') return true;
  return error.code === 'UPSTREAM_ERROR' && (error.details.upstreamStatus ?? 500) >= 500;
}

/** A 401: the key was revoked, or never valid; its cached entries go. */
export const isKeyRevoked = (error: unknown): boolean => error instanceof GatewayError && error.details.upstreamStatus === 401;
