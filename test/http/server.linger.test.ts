// A body over the limit, over real sockets to a gateway in a process of its own (dist/main.js; in the
// test's own process, client and server take turns on one event loop and the race does not show): the
// client reads its 413 (undici's fetch, still sending when the answer comes), and what a refused client
// may still make the gateway read is bounded in bytes and in time (http/linger.ts).
import { connect } from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER } from '../../src/http/linger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_1 } from '../fixture.js';
import { startGatewayProcess, waitFor, type GatewayProcess } from '../gateway-process.js';

let sandbox: Sandbox;
let gateway: GatewayProcess;
let endpoint: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  // A receive timeout of 10 minutes: only the lingering bounds cut a refused client here.
  gateway = startGatewayProcess({ PORT: '0', HOST: '127.0.0.1', UPSTREAM_URL: sandbox.url, REQUEST_RECEIVE_TIMEOUT_MS: '600000' });
  [, endpoint = ''] = await waitFor(gateway.output, /Gateway on (http:\/\/\S+\/graphql)/);
});
afterAll(async () => {
  gateway.child.kill('SIGKILL');
  await gateway.exited;
  await sandbox.close();
});

/** A POST of about `megabytes` MB, as undici's fetch sends it: status and code, or fetch's failure. */
async function postLarge(megabytes: number): Promise<string> {
  const body = JSON.stringify({ query: '{ websites { totalCount } }', variables: { pad: 'x'.repeat(megabytes * 1024 * 1024) } });
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body,
    });
    const json = (await response.json()) as { errors: { extensions: { code: string } }[] };
    return `${response.status} ${json.errors[0]?.extensions.code} ${response.headers.get('connection')}`;
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    return `${(error as Error).message} (${cause?.code ?? 'no cause'})`;
  }
}

/**
 * A raw client that declares a body of 1 GB and writes `chunk` whenever the socket takes it, every
 * `everyMs` (0: as fast as it takes them): what it read, and how many bytes it had written when the
 * gateway ended the connection.
 */
function endlessSender(chunk: Buffer, everyMs: number): Promise<{ answer: string; written: number }> {
  const { hostname, port } = new URL(endpoint);
  return new Promise((resolve) => {
    // Half-open: the gateway's end of its answer does not end this client's sending.
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let answer = '';
    let written = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => (answer += text));
    // The gateway ends it with a reset once past the bound: what was read before it is the answer.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, written });
    });
    const send = (): void => {
      if (socket.destroyed || !socket.writable) return;
      written += chunk.length;
      const more = socket.write(chunk);
      if (everyMs > 0) timer = setTimeout(send, everyMs);
      else if (more) setImmediate(send);
      else socket.once('drain', send);
    };
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${KEY_1}\r\nContent-Length: ${1024 ** 3}\r\n\r\n`,
    );
    send();
  });
}

describe('a body over MAX_BODY_BYTES', () => {
  it('a 5 MB POST by undici fetch gets its 413, nine times in a row, and then one of 20 MB', async () => {
    const answers: string[] = [];
    for (const megabytes of [5, 5, 5, 5, 5, 5, 5, 5, 5, 20]) answers.push(await postLarge(megabytes));
    expect(answers).toEqual(Array(10).fill('413 BODY_LIMIT_EXCEEDED close'));
  });

  it('a client still sending reads its 413, and is cut once it sent more than the bound after it', async () => {
    const { answer, written } = await endlessSender(Buffer.alloc(64 * 1024, 'x'), 0);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('BODY_LIMIT_EXCEEDED');
    // Written into the sockets' buffers as well as read by the gateway: the bound, far under the 1 GB declared.
    expect(written).toBeGreaterThan(LINGER.maxBytes);
    expect(written).toBeLessThan(1024 ** 3 / 4);
  });

  it('a client that sends slowly after its 413 is cut once the lingering time is out, far before the receive timeout', async () => {
    const { answer, written } = await endlessSender(Buffer.from('x'), 100);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    // Cut by the lingering time (a byte every 100 ms), not by the 10-minute receive timeout (nor this test's).
    expect(written).toBeGreaterThan(1);
  });
});
