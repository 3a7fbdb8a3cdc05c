// Listening as both of the gateway's listeners do (the GraphQL server, the metrics listener): the
// address taken, or the listen error (a port in use) as a rejection, and the URL it is reached at.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { integer, text } from '../settings.js';

/** HOST and PORT of the GraphQL server when unset: loopback only. */
/** HOST and PORT: where the gateway listens. */
export const LISTEN_SETTINGS = {
  host: text('HOST', { fallback: '127.0.0.1', unit: 'address', doc: 'interface to listen on' }),
  port: integer('PORT', { fallback: 4000, min: 0, max: 65535, unit: 'port', doc: 'port to listen on (0: any free port)' }),
};

/** Listens on `host:port` (port 0: one the system picks); resolves with `http://host:port`, an IPv6 host in brackets. */
export async function listenOn(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}
