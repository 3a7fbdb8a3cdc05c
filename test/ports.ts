// A free port for the suites that must name one before a server takes it (a restart on the same port,
// a Prometheus or HAProxy configuration, a Redis nobody listens on).
import { createServer } from 'node:net';

/** A port nothing listens on now: the kernel's pick for 127.0.0.1:0, closed again. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
