// WORKERS=2 with METRICS_PORT: the real process (dist/main.js, built by npm test), whose primary
// answers every scrape with the sum over both workers, however the requests were spread.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { freePort } from '../ports.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_1, postGraphQL } from '../fixture.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
let child: ChildProcess | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  child?.kill('SIGKILL');
  await sandbox?.close();
});

const requestCount = (text: string): number =>
  [...text.matchAll(/^gateway_graphql_request_duration_seconds_count\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);

it('METRICS_PORT answers the sum over all workers on every scrape', async () => {
  sandbox = await startSandbox({ port: 0 });
  const metricsPort = await freePort();
  const proc = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      UPSTREAM_URL: sandbox.url,
      WORKERS: '2',
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let output = '';
  proc.stdout?.on('data', (chunk) => (output += chunk));
  proc.stderr?.on('data', (chunk) => (output += chunk));
  for (let i = 0; i < 200 && (output.match(/Gateway on /g)?.length ?? 0) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  const [, base] = /Gateway on (http:\/\/\S+)\/graphql/.exec(output) ?? [];
  if (base === undefined) throw new Error(`no address in the banner:\n${output}`);

  // New connections each: the primary hands them to the workers in turn.
  for (let i = 0; i < 6; i++) {
    const answer = await postGraphQL<unknown>(
      `${base}/graphql`,
      { query: '{ websites { totalCount } }' },
      {
        authorization: `Bearer ${KEY_1}`,
        connection: 'close',
      },
    );
    expect(answer.status).toBe(200);
  }
  for (let scrape = 0; scrape < 3; scrape++) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(requestCount(text)).toBe(6);
  }
}, 30_000);
