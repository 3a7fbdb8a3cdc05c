// THE STATIC SERVER: A BENCHMARK YARDSTICK, NOT THE PRODUCT. A node:http server that answers every
// request, once its body is read, with the same bytes: the dashboard's answer, as the gateway sends it
// stored (the `stored` pass, bench/stored.ts). What sending those bytes costs, and nothing else.
//
// Environment: HOST (127.0.0.1), PORT (0: any free port), STATIC_BODY_FILE (required: the bytes),
// STATIC_CONTENT_TYPE (application/json). It prints the line the bench harness waits for:
// `Static server on http://host:port/graphql`.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const file = process.env.STATIC_BODY_FILE;
if (!file) {
  console.error('static-server: STATIC_BODY_FILE is required');
  process.exit(2);
}
const body = readFileSync(file);
const headers = { 'content-type': process.env.STATIC_CONTENT_TYPE ?? 'application/json', 'content-length': String(body.length) };

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => res.writeHead(200, headers).end(body));
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(`Static server on http://${address}:${port}/graphql (the bench's yardstick: the same bytes, nothing else)`);
});

const stop = (): void => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
