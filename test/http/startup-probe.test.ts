// The start-up probe against real servers: the sandbox (an analytics API), a closed port, a wrong path,
// a web page, a TLS handshake with a server that speaks plain HTTP.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeUpstream } from '../../src/http/startup-probe.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

let sandbox: Sandbox;
let webPage: Server;
let webPageUrl: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  webPage = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><h1>Welcome</h1>'));
  await new Promise<void>((resolve) => webPage.listen(0, '127.0.0.1', resolve));
  webPageUrl = `http://127.0.0.1:${(webPage.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sandbox.close();
  await new Promise((resolve) => webPage.close(resolve));
});

/** A port nothing listens on: one just closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('probeUpstream', () => {
  it('finds nothing wrong with an analytics API, with or without a trailing slash, and sends no key', async () => {
    sandbox.log.reset();
    expect(await probeUpstream(sandbox.url)).toBeNull();
    expect(await probeUpstream(`${sandbox.url}/`)).toBeNull();
    expect(sandbox.log.entries.map((entry) => [entry.path, entry.status, entry.headers.authorization])).toEqual([
      ['/api/v1/websites', 401, undefined],
      ['/api/v1/websites', 401, undefined],
    ]);
  });

  it('names a refused connection with its code, host and port', async () => {
    const port = await closedPort();
    expect(await probeUpstream(`http://127.0.0.1:${port}`)).toBe(`127.0.0.1:${port} cannot be reached (ECONNREFUSED)`);
  });

  it('names a 404 on the API path (a wrong path prefix)', async () => {
    expect(await probeUpstream(`${sandbox.url}/analytics`)).toBe(
      `${sandbox.url}/analytics/api/v1/websites answered 404: not the analytics API (check UPSTREAM_URL's path)`,
    );
  });

  it('names an HTML page', async () => {
    expect(await probeUpstream(webPageUrl)).toBe(`${webPageUrl}/api/v1/websites answered an HTML page (HTTP 200), not the analytics API`);
  });

  it('names a TLS failure (https to a plain HTTP server)', async () => {
    const { port } = new URL(sandbox.url);
    expect(await probeUpstream(`https://127.0.0.1:${port}`)).toMatch(new RegExp(`^127\\.0\\.0\\.1:${port} cannot be reached \\(\\w+\\)$`));
  });
});
