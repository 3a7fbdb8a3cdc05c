// Readers that stop reading, over real sockets that stop reading: a request's slot is released once its
// answer is produced, so answers stuck on such readers hold their connections, never a slot; the send
// timeout ends those connections, and the bytes waiting on all of them are bounded. GraphiQL's page is
// no work: it never waits for a slot.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, dataOf, metricOf, startStack, until, type Stack } from '../fixture.js';

let stack: Stack | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await stack?.close();
  stack = undefined;
});

/** About 2 MB of JSON: thirty aliases of six years of daily points (the loaders read them once). */
const BIG_QUERY = `{ website(id: "1") { ${Array.from(
  { length: 30 },
  (_, i) => `a${i}: series(metric: VISITORS, from: "2020-01-01", to: "2026-03-01") { points { date count } }`,
).join(' ')} } }`;

/**
 * A raw connection that sends `requests` (pipelined) and never reads a byte: the kernel's buffers fill,
 * then the gateway's. (Paused, it cannot see the gateway end it: the gateway's count of connections does.)
 */
function stalledReader(gatewayUrl: string, requests: string[]): void {
  const { hostname, port } = new URL(gatewayUrl);
  const socket = connect({ port: Number(port), host: hostname });
  sockets.push(socket);
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(requests.join(''));
}

const connections = (gateway: Stack['gateway']): Promise<number> =>
  new Promise((resolve, reject) => gateway.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

/** Waits until the gateway has at most `count` connections; how long that took. */
async function connectionsDownTo(gateway: Stack['gateway'], count: number, withinMs: number): Promise<number> {
  const started = performance.now();
  while ((await connections(gateway)) > count) {
    if (performance.now() - started > withinMs) throw new Error(`still ${await connections(gateway)} connections after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}

const bigAnswer = (): string => {
  const body = JSON.stringify({ query: BIG_QUERY });
  return `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${KEY_1}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};
/** GraphiQL's page as a browser without compression asks for it: about 9 MB. */
const graphiqlPage = 'GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n\r\n';

describe('readers that stop reading', () => {
  it('hold no slot: their answers are produced, the slots are free again, and a normal query is answered beside them', {
    timeout: 40_000,
  }, async () => {
    // The send timeout is a minute and the bound on what they hold 512 MiB (80 MB wait here): nothing ends
    // the stalled connections while the test looks.
    stack = await startStack({
      env: {
        MAX_ACTIVE_REQUESTS: '2',
        MAX_COST: '5000',
        SEND_TIMEOUT_MS: '60000',
        SEND_BUFFER_MAX_BYTES: String(512 * 1024 ** 2),
        METRICS_PORT: '0',
      },
    });
    const { gateway } = stack;
    // The page is rendered at its first view (and compressed as asked): not the attackers' doing.
    expect((await fetch(stack.endpoint, { headers: { accept: 'text/html' } })).status).toBe(200);
    // Two connections with two answers of 2 MB each pipelined, and eight that fetch the page: none read.
    for (let i = 0; i < 2; i++) stalledReader(gateway.url, [bigAnswer(), bigAnswer()]);
    for (let i = 0; i < 8; i++) stalledReader(gateway.url, [graphiqlPage]);
    // Their answers are produced (both slots were taken for them) and stuck; the slots are free again.
    await until(
      'the stalled answers to be produced',
      async () => (await metricOf(gateway, 'gateway_graphql_request_duration_seconds_count')) >= 2,
    );
    await until('the slots to be given back', async () => (await metricOf(gateway, 'gateway_requests_active')) === 0);
    await until('the stalled connections to be accepted', async () => (await connections(gateway)) >= 10);
    const normal = await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }');
    expect(dataOf(normal).website.id).toBe('1');
    // Answered while every stalled connection was still open: none had to end to free a slot.
    expect(await connections(gateway)).toBeGreaterThanOrEqual(10);
  });

  it('end after SEND_TIMEOUT_MS without a byte taken', { timeout: 40_000 }, async () => {
    stack = await startStack({ env: { MAX_COST: '5000', SEND_TIMEOUT_MS: '1000' } });
    const { gateway } = stack;
    expect((await fetch(stack.endpoint, { headers: { accept: 'text/html' } })).status).toBe(200);
    const before = await connections(gateway);
    stalledReader(gateway.url, [bigAnswer(), bigAnswer()]);
    for (let i = 0; i < 4; i++) stalledReader(gateway.url, [graphiqlPage]);
    // Accepted (some may already be ended by then on a busy machine: at least one is enough to wait on).
    await until('a stalled connection to be accepted', async () => (await connections(gateway)) > before);
    // Each connection is ended once its reader has taken nothing for a second (looked at every half second).
    await connectionsDownTo(gateway, before, 15_000);
  });

  it('hold at most SEND_BUFFER_MAX_BYTES between them: past it, the answers that waited longest end first', {
    timeout: 30_000,
  }, async () => {
    stack = await startStack({ env: { SEND_TIMEOUT_MS: '600000', SEND_BUFFER_MAX_BYTES: String(1024 ** 2) } });
    const { gateway } = stack;
    for (let i = 0; i < 6; i++) stalledReader(gateway.url, [graphiqlPage]);
    // The send timeout is ten minutes: only the bound ends them, at its next look (every second).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await connectionsDownTo(gateway, 0, 10_000)).toBeLessThan(10_000);
    expect(dataOf(await stack.gql<{ website: { id: string } }>('{ website(id: "1") { id } }')).website.id).toBe('1');
  });
});
