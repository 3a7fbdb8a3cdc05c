// A refusal while the client still sends its body: later bytes would get a TCP reset, which may reach
// the client before the answer (undici: "fetch failed"). So the connection closes as RFC 9112's
// tear-down asks: half-closed, dropping what arrives until the body is all here, within LINGER.
import type { IncomingMessage } from 'node:http';

export const LINGER = { ms: 2_000, maxBytes: 8 * 1024 * 1024 } as const;

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
    req.once('end', () => socket.destroy());
    socket.once('close', () => {
      clearTimeout(timer);
      req.off('data', onData);
    });
  };
}
