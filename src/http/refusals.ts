// Answers given before GraphQL runs (406, 408, 411, 413, 503), with the security headers and CORS, so
// that a browser app can read the error (and Retry-After) instead of seeing a network failure.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { NOT_STREAMABLE_MESSAGE, SECURITY_HEADERS } from '../http-headers.js';
import { CORS_EXPOSED_HEADERS, isAllowedOrigin, type CorsConfig } from '../graphql/cors.js';
import type { ErrorCode } from '../errors.js';
import { lingerWhileSending } from './linger.js';

export interface Refusal {
  status: number;
  message: string;
  code: Extract<ErrorCode, 'REQUEST_TIMEOUT' | 'OVERLOADED' | 'BODY_LIMIT_EXCEEDED' | 'LENGTH_REQUIRED' | 'NOT_ACCEPTABLE'>;
  /** The limit that refused it, beside the code. */
  extensions?: Record<string, number>;
}

export type RefusalConfig = CorsConfig & { maxCost: number };

export const OVERLOADED: Refusal = { status: 503, message: 'The gateway is busy; retry in a moment.', code: 'OVERLOADED' };

/** A stream asked of a stopping gateway: its client subscribes again, on another replica. */
export const DRAINING: Refusal = {
  status: 503,
  message: 'This gateway is stopping and opens no new stream; subscribe again in a moment.',
  code: 'OVERLOADED',
};

/** A subscription whose Accept rules out an event stream: never run as a request. */
export const NOT_STREAMABLE: Refusal = {
  status: 406,
  message: NOT_STREAMABLE_MESSAGE,
  code: 'NOT_ACCEPTABLE',
};

export const bodyTooLarge = (limit: number): Refusal => ({
  status: 413,
  message: `The request body is larger than the ${limit}-byte limit (MAX_BODY_BYTES).`,
  code: 'BODY_LIMIT_EXCEEDED',
  extensions: { bodyLimit: limit },
});

export const receivedTooSlowly = (timeoutMs: number): Refusal => ({
  status: 408,
  message: `The request did not arrive within ${timeoutMs} ms.`,
  code: 'REQUEST_TIMEOUT',
});

/** A POST whose body is over the limit (413), or chunked with no length to check (411). */
export function bodyRefusal(req: IncomingMessage, limit: number): Refusal | null {
  if (req.method !== 'POST') return null;
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > limit ? bodyTooLarge(limit) : null;
  if (!req.headers['transfer-encoding']) return null;
  return {
    status: 411,
    message: `Send the request body with a Content-Length header: bodies are limited to ${limit} bytes (MAX_BODY_BYTES).`,
    code: 'LENGTH_REQUIRED',
    extensions: { bodyLimit: limit },
  };
}

export function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal, config: RefusalConfig): void {
  if (res.destroyed) return;
  const body = refusalBody(refusal, nothingRan(config.maxCost));
  const headers = headersOf(body);
  if (refusal.code === 'OVERLOADED') headers['retry-after'] = '1';
  const origin = req.headers.origin;
  headers.vary = 'Origin';
  if (origin !== undefined && isAllowedOrigin(origin, config)) {
    headers['access-control-allow-origin'] = origin;
    headers['access-control-expose-headers'] = CORS_EXPOSED_HEADERS.join(', ');
  }
  res.writeHead(refusal.status, headers);
  // Read and drop what the client is still sending, so that it gets to read this answer.
  lingerWhileSending(req);
  res.end(body);
}

/** The whole HTTP/1.1 answer, for a connection with no response object yet: no CORS, no usage figures. */
export function rawRefusal(refusal: Refusal): string {
  const body = refusalBody(refusal);
  const lines = Object.entries(headersOf(body)).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}

const headersOf = (body: string): Record<string, string> => ({
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(Buffer.byteLength(body)),
  connection: 'close',
  ...SECURITY_HEADERS,
});

/** The figures every GraphQL answer's extensions carry, for a request refused before anything ran. */
const nothingRan = (costLimit: number) => ({
  cost: { requested: 0, limit: costLimit },
  upstreamCalls: 0,
  cache: { hits: 0, misses: 0, stale: 0 },
});

const refusalBody = (refusal: Refusal, usage?: ReturnType<typeof nothingRan>): string =>
  JSON.stringify({
    errors: [{ message: refusal.message, extensions: { code: refusal.code, ...refusal.extensions } }],
    ...(usage === undefined ? {} : { extensions: usage }),
  });
