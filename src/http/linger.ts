// Closing a connection while its client is still sending the request's body (a refusal before the body
// was read: 413, 411, 503). node closes a `Connection: close` answer's socket as soon as the answer is
// written; bytes that arrive after that are answered with a TCP reset, and a reset can reach the client
// before it read the answer: undici's fetch then fails ("fetch failed", EPIPE) instead of giving the
// 413. So the gateway closes as HTTP/1.1 asks (RFC 9112, "tear-down"): it stops writing once the answer
// is out, then reads and drops what still arrives until the client closes or the body is all here,
// within LINGER bounds (time and bytes); past them the connection is ended as before.
import type { IncomingMessage } from 'node:http';

/** What a refused client may still send after its answer: for at most `ms`, at most `maxBytes`. */
export const LINGER = { ms: 2_000, maxBytes: 8 * 1024 * 1024 } as const;

/**
 * Reads and drops the rest of `req`'s body; if the answer closes the connection before the body is all
 * here, the connection lingers (half-closed, still reading) within `bounds`.
 */
export function lingerWhileSending(req: IncomingMessage, bounds: { ms: number; maxBytes: number } = LINGER): void {
  req.resume();
  if (req.complete) return;
  const socket = req.socket;
  let dropped = 0;
  const onData = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > bounds.maxBytes) socket.destroy();
  };
  req.on('data', onData);
  // node calls destroySoon once the answer of a closing connection is written (its `finish`).
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (req.complete) return destroySoon();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), bounds.ms);
    // The body all read: nothing unread is left to make a reset.
    req.once('end', () => socket.destroy());
    socket.once('close', () => {
      clearTimeout(timer);
      req.off('data', onData);
    });
  };
}
