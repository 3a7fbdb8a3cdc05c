// Slow clients over real sockets: a request takes an admission slot only once its body is here, and
// headers or bodies that trickle are cut with a 408 after REQUEST_RECEIVE_TIMEOUT_MS.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, dataOf, postGraphQL, startStack, type Stack } from '../fixture.js';

let stack: Stack;
afterEach(async () => {
  await stack.close();
});

const QUERY = '{ website(id: "1") { id domain } }';
const RECEIVE_TIMEOUT_MS = 1_000;
/** node checks for late requests every second at most (server.ts), and the test's own slack. */
const CUT_MARGIN_MS = 1_000 + 1_000;

interface RawAnswer {
  /** null: the connection closed with no answer. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** When the server closed the connection, from the client's start. */
  closedAfterMs: number;
}

/**
 * A client on a raw socket: writes `head` at once, then `trickle` one byte every `everyMs`, and reads
 * until the server closes the connection.
 */
function slowClient(head: string, trickle: string, everyMs: number): Promise<RawAnswer> {
  const { hostname, port } = new URL(stack.gateway.url);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let sent = 0;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    // A byte written as the server closes may meet a reset; what was read before it is the answer.
    socket.on('error', () => undefined);
    const dripping = setInterval(() => {
      if (sent < trickle.length && socket.writable) socket.write(trickle.charAt(sent++));
    }, everyMs);
    socket.on('close', () => {
      clearInterval(dripping);
      resolve({ ...parseAnswer(received), closedAfterMs: performance.now() - started });
    });
    if (head !== '') socket.write(head);
  });
}

function parseAnswer(raw: string): Omit<RawAnswer, 'closedAfterMs'> {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1];
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: status === undefined ? null : Number(status), headers, body };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const postHead = (body: string, extra = ''): string =>
  `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`;

const codeOf = (answer: { body: string }): unknown =>
  (JSON.parse(answer.body) as { errors?: { extensions?: { code?: unknown } }[] }).errors?.[0]?.extensions?.code;

describe('slow clients', () => {
  it('forty clients trickling their bodies hold no slot: a normal query is answered meanwhile, and they get a 408', {
    timeout: 15_000,
  }, async () => {
    stack = await startStack({ env: { REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) } });
    const body = JSON.stringify({ query: QUERY });
    // No key, one byte every 200 ms: the whole body would take 7 s, more than MAX_ACTIVE_REQUESTS (16) of them.
    const opened = performance.now();
    const trickling = Array.from({ length: 40 }, () => slowClient(postHead(body, 'Origin: http://localhost:5173\r\n'), body, 200));
    await pause(200);
    const normal = await postGraphQL<{ website: { id: string } | null }>(
      stack.endpoint,
      { query: QUERY },
      { authorization: `Bearer ${KEY_1}` },
    );
    const answeredAfterMs = performance.now() - opened;
    expect(dataOf(normal).website?.id).toBe('1');

    const answers = await Promise.all(trickling);
    expect(answeredAfterMs).toBeLessThan(Math.min(...answers.map((answer) => answer.closedAfterMs)));
    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.closedAfterMs).toBeLessThan(RECEIVE_TIMEOUT_MS + CUT_MARGIN_MS);
      // The refusal a browser app can read, as the gateway's other refusals.
      expect(answer.headers).toMatchObject({
        'access-control-allow-origin': 'http://localhost:5173',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        connection: 'close',
      });
      expect(codeOf(answer)).toBe('REQUEST_TIMEOUT');
    }
    expect(stack.sandbox.log.count).toBe(1);
  });

  it('cuts a client trickling its headers, and one that sends nothing, with a 408', { timeout: 10_000 }, async () => {
    stack = await startStack({ env: { REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) } });
    const [headers, silent] = await Promise.all([
      slowClient('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n', `X-Slow: ${'a'.repeat(50)}\r\n\r\n`, 200),
      slowClient('', '', 200),
    ]);
    for (const answer of [headers, silent]) {
      expect(answer.status).toBe(408);
      expect(answer.closedAfterMs).toBeLessThan(RECEIVE_TIMEOUT_MS + CUT_MARGIN_MS);
      expect(answer.headers).toMatchObject({ 'x-content-type-options': 'nosniff', connection: 'close' });
      expect(codeOf(answer)).toBe('REQUEST_TIMEOUT');
    }
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('caps the body of any method while it is read: a chunked PUT over MAX_BODY_BYTES is a 413', async () => {
    stack = await startStack({ env: { MAX_BODY_BYTES: '1024' } });
    const response = await fetch(stack.endpoint, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: new Blob(['x'.repeat(4_096)]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { errors: { extensions: Record<string, unknown> }[] }).errors[0]?.extensions).toEqual({
      code: 'BODY_LIMIT_EXCEEDED',
      bodyLimit: 1024,
    });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('answers an empty POST body as GraphQL over HTTP says, without waiting for a body', async () => {
    stack = await startStack();
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${KEY_1}` },
    });
    expect(response.status).toBe(400);
    await response.text();
    expect(stack.sandbox.log.count).toBe(0);
  });
});
