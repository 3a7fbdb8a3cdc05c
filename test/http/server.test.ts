// The HTTP layer's own answers, before GraphQL runs: the root redirects to GraphiQL; a request that
// does not parse gets node's own answer.
import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { testConfig } from '../fixture.js';

let gateway: Gateway;
beforeAll(async () => {
  // No upstream call is made by these tests; any URL will do.
  gateway = await createGateway(testConfig('http://127.0.0.1:9'));
});
afterAll(() => gateway.close());

describe('GET /', () => {
  it.each(['GET', 'HEAD'] as const)('%s / redirects to /graphql', async (method) => {
    const response = await request(`${gateway.url}/`, { method });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/graphql');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    await response.body.dump();
  });

  it('other paths are not redirected', async () => {
    const response = await request(`${gateway.url}/elsewhere`);
    expect(response.statusCode).toBe(404);
    await response.body.dump();
  });
});

/** What the server answers `raw`, read until it closes the connection. */
function sendRaw(raw: string): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(raw));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('requests that do not parse', () => {
  // The gateway listens for client errors to answer a late request with its own 408: the others
  // must still get what node answers them.
  it('a malformed request line gets a 400', async () => {
    expect(await sendRaw('NOT HTTP AT ALL\r\n\r\n')).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });

  it("headers over node's size limit get a 431", async () => {
    const answer = await sendRaw(`GET /graphql HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toBe('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
  });
});
