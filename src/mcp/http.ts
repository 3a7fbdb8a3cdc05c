// MCP's Streamable HTTP at /mcp, stateless: each POST gets a server and a transport of its own, answered
// with JSON (no session, no stream). GET (a stream of server messages) and DELETE (the end of a session)
// have nothing to serve: 405. A browser's Origin must be one the GraphQL endpoint allows (DNS
// rebinding); the key is the caller's analytics key, `Authorization: Bearer`, checked by the upstream on
// each tool call; without one the answer is 401 with `WWW-Authenticate: Bearer`. This answers a web
// Request with a web Response: the HTTP layer (src/http) reads the request and writes the answer.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { readAuthorization } from '../api-key.js';
import { createMcpServer, type McpService } from './server.js';

export const MCP_ENDPOINT = '/mcp';

export interface McpHttpOptions {
  /** Whether a browser page of this origin may call (CORS_ORIGINS, as for /graphql). */
  allowedOrigin(origin: string): boolean;
  /** MAX_BODY_BYTES: the transport reads no larger body. */
  maxBodyBytes: number;
}

/** A JSON-RPC error answer outside any request (no id): what the transport itself answers. */
function refusal(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });
}

/** The W3C trace context the client sent, if any: a tool call's spans continue the client's trace. */
function traceContextOf(headers: Headers): Record<string, string> | undefined {
  const traceparent = headers.get('traceparent');
  if (traceparent === null) return undefined;
  const tracestate = headers.get('tracestate');
  return tracestate === null ? { traceparent } : { traceparent, tracestate };
}

/** Answers one request to /mcp. */
export function createMcpHttpHandler(service: McpService, options: McpHttpOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'POST') {
      return refusal(405, -32000, 'Method not allowed: this server is stateless, POST JSON-RPC messages to it.', { allow: 'POST' });
    }
    const origin = request.headers.get('origin');
    if (origin !== null && !options.allowedOrigin(origin)) {
      return refusal(403, -32000, `Origin ${origin.slice(0, 100)} is not allowed (CORS_ORIGINS).`);
    }
    const credentials = readAuthorization(request.headers.get('authorization'));
    if (!('authorization' in credentials)) return refusal(401, -32001, credentials.problem, { 'www-authenticate': 'Bearer' });
    const server = createMcpServer(service, credentials.authorization, traceContextOf(request.headers));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: options.maxBodyBytes,
    });
    await server.connect(transport);
    // A client that leaves stops its calls: closing the server aborts their signals, and so the GraphQL
    // requests they run and those requests' upstream calls. The transport's own answer, never to be sent,
    // is let go with it.
    const left = new Promise<Response>((resolve) => {
      request.signal.addEventListener('abort', () => resolve(new Response(null, { status: 499 })), { once: true });
    });
    try {
      return await Promise.race([transport.handleRequest(request), left]);
    } finally {
      await server.close();
    }
  };
}
