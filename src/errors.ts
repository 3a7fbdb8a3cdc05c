import { GraphQLError } from 'graphql';

/** The `extensions.code` values a client can branch on (README: "Error codes"). */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'RATE_LIMITED'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_BAD_RESPONSE'
  | 'UNSUPPORTED'
  | 'OVERLOADED'
  /** A subscription asked of with an Accept that rules out an event stream (HTTP 406). */
  | 'NOT_ACCEPTABLE';

export interface ErrorExtensions {
  /** HTTP status the upstream answered, when it answered. */
  upstreamStatus?: number;
  /** RATE_LIMITED: seconds to wait before trying again. */
  retryAfter?: number;
  /** BAD_USER_INPUT: the argument (path) that was refused. */
  argument?: string;
  /** BAD_USER_INPUT from an upstream 422: field -> messages, field names as in our schema. */
  fieldErrors?: Record<string, string[]>;
  /**
   * What became of a write whose answer is an error. UNKNOWN: it failed after it was sent, so the
   * upstream may or may not have applied it. APPLIED: the upstream said it was (2xx), but its answer
   * could not be read, nor the website read back.
   */
  outcome?: 'UNKNOWN' | 'APPLIED';
}

/**
 * Every error the gateway raises on purpose is a GraphQLError with a code, so yoga's masking lets
 * it through unchanged while anything unexpected is masked.
 */
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

export function badInput(argument: string, message: string): GatewayError {
  return new GatewayError('BAD_USER_INPUT', message, { argument });
}

export function isGatewayError(error: unknown, code?: ErrorCode): error is GatewayError {
  return error instanceof GatewayError && (code === undefined || error.code === code);
}
