// Answers a request with a handler of web Requests (the MCP endpoint's); the ending sends its Response.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export type WebHandler = (request: Request) => Promise<Response>;

/** Its body is the one readBody kept in `req.body`. */
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
    ...(hasBody ? { body: (body ?? new Uint8Array()) as Uint8Array<ArrayBuffer> } : {}),
  });
}

/** A handler that throws is answered 500 and logged; the client leaving aborts the handler's work. */
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
