// Answers a request with a handler of web Requests and Responses (the MCP endpoint's): the request's
// body as read by receive.ts, its headers and URL made into a Request; its Response is sent by the
// ending (answer.ts), with the security headers and no-store, as every answer of the gateway.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** What answers a web Request. */
export type WebHandler = (request: Request) => Promise<Response>;

/** The request as a web Request: its body is the one readBody kept in `req.body`. */
function webRequestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  const body = (req as IncomingMessage & { body?: Buffer }).body;
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // The path is what the handler reads; the Host header, whatever the client wrote in it, is not needed.
  return new Request(new URL(req.url ?? '/', 'http://localhost'), {
    method: req.method ?? 'GET',
    headers,
    signal,
    // A Buffer is a Uint8Array, which fetch's Request takes as it is.
    ...(hasBody ? { body: (body ?? new Uint8Array()) as Uint8Array<ArrayBuffer> } : {}),
  });
}

/**
 * The handler's Response to the request, which the ending sends (answer.ts); a handler that throws is
 * answered 500 and logged. The client leaving aborts the handler's work.
 */
export async function webAnswerOf(req: IncomingMessage, res: ServerResponse, handler: WebHandler, logger: Logger): Promise<Response> {
  const left = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) left.abort();
  });
  try {
    return await handler(webRequestOf(req, left.signal));
  } catch (error) {
    // A fault of the gateway's own: the handler answers every mistake of the client's itself.
    logger.error({ err: error, path: req.url }, 'web handler failed');
    return Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }, { status: 500 });
  }
}
