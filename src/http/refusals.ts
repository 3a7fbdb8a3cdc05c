// Answers the HTTP layer gives before GraphQL runs (411, 413, 503 OVERLOADED), with the headers
// yoga's answers carry: the security headers, and CORS for an allowed origin, so that a browser app
// can read the error (and Retry-After) instead of seeing a network failure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from '../graphql/plugins/use-security-headers.js';
import { CORS_EXPOSED_HEADERS, isAllowedOrigin, type CorsConfig } from '../graphql/cors.js';

export interface Refusal {
  status: number;
  message: string;
  code: 'BAD_USER_INPUT' | 'OVERLOADED';
}

export const OVERLOADED: Refusal = { status: 503, message: 'The gateway is busy; retry in a moment.', code: 'OVERLOADED' };

/** A POST whose body is over the limit (413), or chunked with no length to check (411). */
export function bodyRefusal(req: IncomingMessage, limit: number): Refusal | null {
  if (req.method !== 'POST') return null;
  const length = req.headers['content-length'];
  if (length === undefined) {
    return req.headers['transfer-encoding']
      ? { status: 411, message: 'Send the request body with a Content-Length header.', code: 'BAD_USER_INPUT' }
      : null;
  }
  return Number(length) > limit
    ? { status: 413, message: `The request body is larger than the ${limit}-byte limit.`, code: 'BAD_USER_INPUT' }
    : null;
}

export function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal, cors: CorsConfig): void {
  if (res.destroyed) return;
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    connection: 'close',
    ...SECURITY_HEADERS,
  };
  if (refusal.code === 'OVERLOADED') headers['retry-after'] = '1';
  const origin = req.headers.origin;
  headers.vary = 'Origin';
  if (origin !== undefined && isAllowedOrigin(origin, cors)) {
    headers['access-control-allow-origin'] = origin;
    headers['access-control-expose-headers'] = CORS_EXPOSED_HEADERS.join(', ');
  }
  res.writeHead(refusal.status, headers);
  res.end(JSON.stringify({ errors: [{ message: refusal.message, extensions: { code: refusal.code } }] }));
  // Read and drop what the client is still sending, so it gets to read this answer.
  req.resume();
}
