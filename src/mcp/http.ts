// MCP's Streamable HTTP at /mcp, stateless: each POST gets a server and a transport of its own, answered
// with JSON (no session, no stream: GET and DELETE get 405). A browser's Origin must be one the GraphQL
// endpoint allows (DNS rebinding); the key is the caller's, `Authorization: Bearer`, checked by the
// upstream on each tool call. A web Request in, a web Response out: src/http reads and writes them.
import { readAuthorization } from '../api-key.js';
import type { McpService } from './server.js';

export const MCP_ENDPOINT = '/mcp';

export interface McpHttpOptions {
  /** CORS_ORIGINS, as for /graphql. */
  allowedOrigin(origin: string): boolean;
  maxBodyBytes: number;
}

/** A JSON-RPC error outside any request (no id). */
function refusal(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });
}

/** A tool call's spans continue the client's trace. */
function traceContextOf(headers: Headers): Record<string, string> | undefined {
  const traceparent = headers.get('traceparent');
  if (traceparent === null) return undefined;
  const tracestate = headers.get('tracestate');
  return tracestate === null ? { traceparent } : { traceparent, tracestate };
}

// The SDK (and the validator it builds) loads with the first MCP request, not at start: most gateways get none.
let sdk: Promise<typeof import('./server.js')> | undefined;

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
    const { createMcpServer, WebStandardStreamableHTTPServerTransport } = await (sdk ??= import('./server.js'));
    const server = createMcpServer(service, credentials.authorization, traceContextOf(request.headers));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: options.maxBodyBytes,
    });
    await server.connect(transport);
    // A client that leaves stops its calls: closing the server aborts their signals, and so their GraphQL
    // requests and upstream calls.
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
