// Listening and closing, as both listeners do (the GraphQL server, the metrics listener).
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { integer, text } from '../settings.js';

/** HOST and PORT: where the gateway listens (loopback by default). */
export const LISTEN_SETTINGS = {
  host: text('HOST', { fallback: '127.0.0.1', unit: 'address', doc: 'interface to listen on' }),
  port: integer('PORT', { fallback: 4000, min: 0, max: 65535, unit: 'port', doc: 'port to listen on (0: any free port)' }),
};

/** Listens (port 0: one the system picks); resolves with its URL, or rejects with the listen error (a port in use). */
export async function listenOn(server: Server, host: string, port: number): Promise<string> {
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Stops listening and ends every connection at once. */
export function closeNow(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
