// The composition root's log of the upstream: a failed call names its cause (code, host and port,
// status) and never the key, so that a wrong UPSTREAM_URL or a failing install is diagnosed from one line.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../src/gateway.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { KEY_1, postGraphQL, testConfig } from './fixture.js';

let gateway: Gateway | undefined;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await gateway?.close();
  await sandbox?.close();
  gateway = sandbox = undefined;
});

/** A pino logger at warn whose lines are kept, parsed, with the raw text to search for the key. */
function recordingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[]; raw: () => string } {
  let raw = '';
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'warn', base: null }, sink), lines, raw: () => raw };
}

const failures = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === 'upstream call failed');

describe('the log line of a failed upstream call', () => {
  it('names the error code and the host and port when nothing answers', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const log = recordingLogger();
    gateway = await createGateway(testConfig(`http://127.0.0.1:${port}`, { UPSTREAM_MAX_ATTEMPTS: '1' }), { logger: log.logger });
    const answer = await postGraphQL(
      `${gateway.url}/graphql`,
      { query: '{ website(id: "3") { id } }' },
      { authorization: `Bearer ${KEY_1}` },
    );
    expect(answer.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(failures(log.lines)).toEqual([
      expect.objectContaining({ method: 'GET', route: '/api/v1/websites/{id}', upstream: `127.0.0.1:${port}`, code: 'ECONNREFUSED' }),
    ]);
    expect(log.raw()).not.toContain(KEY_1);
  });

  it('names the status when the install answers a 5xx', async () => {
    sandbox = await startSandbox({ port: 0, faultRate: 1 });
    const log = recordingLogger();
    gateway = await createGateway(testConfig(sandbox.url, { UPSTREAM_MAX_ATTEMPTS: '2' }), { logger: log.logger });
    await postGraphQL(`${gateway.url}/graphql`, { query: '{ website(id: "3") { id } }' }, { authorization: `Bearer ${KEY_1}` });
    const { port } = new URL(sandbox.url);
    const logged = failures(log.lines);
    expect(logged).toHaveLength(2); // one line per attempt
    for (const line of logged) {
      expect(line).toMatchObject({ method: 'GET', route: '/api/v1/websites/{id}', upstream: `127.0.0.1:${port}` });
      expect([500, 503]).toContain(line.status);
    }
    expect(log.raw()).not.toContain(KEY_1);
  });

  it('logs nothing for answers that are the caller’s business (a 404)', async () => {
    sandbox = await startSandbox({ port: 0 });
    const log = recordingLogger();
    gateway = await createGateway(testConfig(sandbox.url), { logger: log.logger });
    const answer = await postGraphQL(
      `${gateway.url}/graphql`,
      { query: '{ website(id: "999") { id } }' },
      { authorization: `Bearer ${KEY_1}` },
    );
    expect(answer.status).toBe(200);
    expect(failures(log.lines)).toEqual([]);
  });
});
