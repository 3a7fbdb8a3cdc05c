// A slot's release over real HTTP, admission control alone: released by its handler at once (an answer
// sent in the same turn: a stored answer), or when its response closes without a release (its client left).
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdmittedHandler, createAdmission } from '../../src/http/admission.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server admitting each request through one slot; `handle` says what the admitted request does. */
async function serve(handle: (path: string) => AdmittedHandler): Promise<{ url: string; admission: ReturnType<typeof createAdmission> }> {
  const admission = createAdmission({ maxActive: 1, maxQueued: 10, maxWaitMs: 10_000, reject: (_req, res) => res.writeHead(503).end() });
  server = createServer((req: IncomingMessage, res: ServerResponse) => admission.admit(req, res, handle(req.url ?? '')));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, admission };
}

describe('admission control: releasing a slot', () => {
  it('an answer sent and released at once frees the slot for the next, one after another', async () => {
    const { url, admission } = await serve(() => (_req, res, release) => {
      res.end('sent');
      release();
    });
    for (let n = 0; n < 5; n++) expect(await (await fetch(url)).text()).toBe('sent');
    expect(admission.active).toBe(0);
  });

  it('a request whose client leaves before its release frees its slot when its response closes', async () => {
    const { url, admission } = await serve((path) => (_req, res, release) => {
      if (path === '/hold') return; // never answered nor released: only its close frees the slot
      res.end('next');
      release();
    });
    const held = request(`${url}/hold`);
    held.on('error', () => undefined);
    held.end();
    while (admission.active === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const next = fetch(`${url}/next`).then((response) => response.text());
    while (admission.queued === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    held.destroy(); // the client leaves
    expect(await next).toBe('next');
    expect(admission.active).toBe(0);
  });
});
