// Drain in-process (the real process and its signals: test/main.test.ts): what a keep-alive
// connection busy when accepting stops is told, and what the listener does then.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, startStack, type Stack } from '../fixture.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('drain', () => {
  it('a request in flight when accepting stops is answered with Connection: close, then its connection is closed', async () => {
    stack = await startStack({ env: { DRAIN_DELAY_MS: '0' }, sandbox: { latencyMs: 300 } });
    const { hostname, port } = new URL(stack.gateway.url);
    const body = JSON.stringify({ query: '{ websites { totalCount } }' });
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${KEY_1}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const current = stack;
    while (current.sandbox.log.inFlight < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    const drained = current.gateway.drain();
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('"totalCount"');
    await drained;
  });
});
