// Receiving a request: its body, read whole before it gets in line, and the time it may take.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { integer } from '../settings.js';
export const RECEIVE_SETTINGS = {
  receiveTimeoutMs: integer('REQUEST_RECEIVE_TIMEOUT_MS', {
    fallback: 10_000,
    min: 100,
    max: 600_000,
    unit: 'ms',
    doc: "time from a request's first byte for its headers and body to arrive; a slower client is answered 408",
  }),
  bodyBytes: integer('MAX_BODY_BYTES', {
    fallback: 64 * 1024,
    min: 1024,
    max: 16 * 1024 * 1024,
    unit: 'bytes',
    doc: 'largest request body',
  }),
};

/** Into `req.body`, which @whatwg-node/server uses instead of the stream; nothing is called if the client leaves. */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number, then: { read(): void; tooLarge(): void }): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else {
      req.off('data', onData).off('end', onEnd);
      then.tooLarge();
    }
  };
  const onEnd = (): void => {
    if (res.headersSent) return; // refused meanwhile (408)
    if (size > 0) (req as { body?: Buffer }).body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    then.read();
  };
  req.on('data', onData).once('end', onEnd);
}
