// `npm start` as a user meets it: the built entry point, with no UPSTREAM_URL, embeds the sandbox.
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tuneHeap } from '../src/heap.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { dataOf, postGraphQL } from './fixture.js';
import { startGatewayProcess, waitFor } from './gateway-process.js';

let child: ChildProcess | undefined;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await sandbox?.close();
  sandbox = undefined;
});

const start = startGatewayProcess;

describe('npm start', () => {
  it('embeds the sandbox when no UPSTREAM_URL is set, prints how to use it, and answers', async () => {
    const run = start({ PORT: '0' });
    child = run.child;
    const [, endpoint] = await waitFor(run.output, /Gateway on (http:\/\/\S+\/graphql)/);
    if (endpoint === undefined) throw new Error('no endpoint in the banner');
    await waitFor(run.output, /Browser apps allowed/);
    expect(run.output()).toContain('sandbox-key-1');
    expect(run.output()).toContain('curl -s');
    // What to try next: the trace panel, live traffic with this sandbox's address, the dashboard.
    const [, sandboxUrl] = /Upstream: the bundled sandbox at (\S+) /.exec(run.output()) ?? [];
    expect(run.output()).toContain('open the Upstream calls panel');
    expect(run.output()).toContain(`npm run traffic -- ${sandboxUrl}   visits arriving every second`);
    expect(run.output()).toContain('npm run example');
    expect(run.output()).toContain('Browser apps allowed (CORS): http://localhost:* and http://127.0.0.1:* (not in production)');
    const response = await postGraphQL<{ websites: { totalCount: number } }>(
      endpoint,
      { query: '{ websites { totalCount } }' },
      {
        authorization: 'Bearer sandbox-key-1',
      },
    );
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).websites.totalCount).toBeGreaterThanOrEqual(6);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('warns, naming the cause, when UPSTREAM_URL does not answer like the analytics API, and serves on', async () => {
    sandbox = await startSandbox({ port: 0 });
    const run = start({ PORT: '0', UPSTREAM_URL: `${sandbox.url}/not-here`, DRAIN_DELAY_MS: '0' });
    child = run.child;
    const [, base] = await waitFor(run.output, /Gateway on (http:\/\/\S+)\/graphql/);
    await waitFor(run.output, /Warning: UPSTREAM_URL/);
    expect(run.output()).toContain(
      `Warning: UPSTREAM_URL ${sandbox.url}/not-here does not answer like the analytics API: ${sandbox.url}/not-here/api/v1/websites answered 404`,
    );
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('logs each request on stdout, one JSON line each: named, anonymous, refused, sent from its stored answer', async () => {
    sandbox = await startSandbox({ port: 0 });
    const run = start({ PORT: '0', UPSTREAM_URL: sandbox.url, CACHE: 'on', DRAIN_DELAY_MS: '0' });
    child = run.child;
    const [, endpoint] = await waitFor(run.output, /Gateway on (http:\/\/\S+\/graphql)/);
    if (endpoint === undefined) throw new Error('no endpoint in the banner');
    const headers = { authorization: 'Bearer sandbox-key-1' };
    const sites = { query: 'query Sites { websites { totalCount } }' };
    await postGraphQL(endpoint, { query: '{ websites { totalCount } }' }, headers);
    await postGraphQL(endpoint, { query: 'query Broken { nope }', operationName: 'Broken' }, headers);
    // The answer is stored once it is sent: the same query again until one is sent from it (its line says so).
    for (let i = 0; i < 100 && !run.output().includes('"storedAnswer":true'); i++) {
      await postGraphQL(endpoint, sites, headers);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const lines = run
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'graphql request');
    for (const line of lines) {
      expect(Object.keys(line).slice(0, 8)).toEqual([
        'level',
        'time',
        'operation',
        'durationMs',
        'upstreamCalls',
        'cost',
        'cache',
        'outcome',
      ]);
      expect(Object.keys(line).at(-1)).toBe('msg');
      expect(line.level).toBe(30);
    }
    expect(lines[0]).toMatchObject({ operation: null, outcome: 'ok', upstreamCalls: 1, cache: { hits: 0, misses: 1, stale: 0 } });
    expect(lines[1]).toMatchObject({ operation: 'Broken', outcome: 'error', errorCodes: ['GRAPHQL_VALIDATION_FAILED'], cost: null });
    expect(lines[2]).toMatchObject({ operation: 'Sites', outcome: 'ok' });
    expect(lines[2]?.storedAnswer).toBeUndefined();
    expect(lines.at(-1)).toMatchObject({ operation: 'Sites', outcome: 'ok', upstreamCalls: 0, storedAnswer: true });
    expect(run.output()).not.toContain('sandbox-key-1');
  });

  it('stops with exit code 2 and a clear message on invalid configuration', async () => {
    const run = start({ PORT: 'eighty', UPSTREAM_URL: 'not a url' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(run.output()).toContain('UPSTREAM_URL must be an absolute http(s) URL');
  });

  it('in production with no UPSTREAM_URL: refuses to start, in one line saying what to set', async () => {
    const run = start({ NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' });
    child = run.child;
    expect(await run.exited).toBe(2);
    expect(run.output()).toBe(
      'Invalid configuration:\n' +
        "  - UPSTREAM_URL is not set: set it to the analytics install's URL (NODE_ENV=production serves the demo sandbox only with SANDBOX=on)\n",
    );
  });

  it('in production with SANDBOX=on: serves the sandbox, and offers no GraphiQL, which production does not serve', async () => {
    const run = start({ NODE_ENV: 'production', SANDBOX: 'on', PORT: '0', HOST: '127.0.0.1', DRAIN_DELAY_MS: '0' });
    child = run.child;
    const [line = '', base] = await waitFor(run.output, /Gateway on (http:\/\/\S+)\/graphql.*/);
    await waitFor(run.output, /Browser apps allowed/);
    expect(line).toMatch(/^Gateway on http:\/\/127\.0\.0\.1:\d+\/graphql, version /);
    expect(run.output()).toContain('Demo keys: sandbox-key-1');
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
    await page.arrayBuffer();
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('refuses URLs whose port is out of range without printing their passwords', async () => {
    const run = start({ UPSTREAM_URL: 'https://admin:hunter2@analytics.example.com:99999/', REDIS_URL: 'redis://:hunter3@cache:99999' });
    child = run.child;
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain(
      'UPSTREAM_URL must not carry credentials (a user or password; an @ in its path is written %40), got "https://***@analytics.example.com:99999/"',
    );
    expect(run.output()).toContain('REDIS_URL must be redis://host:port, with a host and a port from 1 to 65535');
    expect(run.output()).not.toMatch(/hunter/);
  });
});

/** Polls `check` until it holds (each test's own vitest timeout bounds the wait). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A keep-alive connection that has answered one request and sits idle; `closed` resolves when the server ends it. */
async function idleKeepAlive(url: string): Promise<{ closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  await until(() => received.includes('\r\n\r\n'));
  expect(received).toMatch(/^HTTP\/1\.1 200/);
  return { closed };
}

async function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: Error & { code?: string }) => resolve(error.code === 'ECONNREFUSED'));
  });
}

const QUERY = { query: '{ websites { totalCount } }' };
const AUTH = { authorization: 'Bearer sandbox-key-1' };

describe('a signal drains the gateway', () => {
  const startAgainstSlowSandbox = async (env: Record<string, string>) => {
    sandbox = await startSandbox({ port: 0, latencyMs: 800 });
    const run = start({ PORT: '0', UPSTREAM_URL: sandbox.url, CACHE: 'off', MAX_ACTIVE_REQUESTS: '64', LOG_LEVEL: 'warn', ...env });
    child = run.child;
    const [, base] = await waitFor(run.output, /Gateway on (http:\/\/\S+)\/graphql/);
    if (base === undefined) throw new Error('no address in the banner');
    return { run, base, upstream: sandbox };
  };
  const auth = { authorization: 'Bearer sandbox-key-1' };

  it('SIGTERM: /ready 503 at once, new requests served for DRAIN_DELAY_MS, idle keep-alive closed, nothing in flight lost, exit 0', async () => {
    const { run, base, upstream } = await startAgainstSlowSandbox({ DRAIN_DELAY_MS: '2000', DRAIN_TIMEOUT_MS: '20000' });
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const idle = await idleKeepAlive(base);
    let idleClosedAt: 'before exit' | 'after exit' | undefined;
    void idle.closed.then(() => (idleClosedAt ??= run.child.exitCode === null ? 'before exit' : 'after exit'));

    const inFlight = Array.from({ length: 20 }, () => postGraphQL<{ websites: { totalCount: number } }>(`${base}/graphql`, QUERY, auth));
    await until(() => upstream.log.count >= 20); // all arrived; with 800 ms of latency, still in flight
    run.child.kill('SIGTERM');
    await waitFor(run.output, /SIGTERM: draining/);

    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining', upstreamBreaker: 'closed', store: 'off' });
    // Still within DRAIN_DELAY_MS: a load balancer that has not yet seen the 503 is still served.
    const lateComer = postGraphQL<{ websites: { totalCount: number } }>(`${base}/graphql`, QUERY, auth);

    const answers = await Promise.all([...inFlight, lateComer]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.errors).toBeUndefined();
      expect(dataOf(answer).websites.totalCount).toBeGreaterThanOrEqual(6);
    }
    expect(await run.exited).toBe(0);
    await idle.closed;
    expect(idleClosedAt).toBe('before exit');
    expect(await connectionRefused(base)).toBe(true);
  });

  it('Ctrl-C outside production with nothing in flight: exits 0 at once, where production waits DRAIN_DELAY_MS', async () => {
    // The control: production's default delay, during which a draining gateway still answers (503 on /ready).
    const production = start({ NODE_ENV: 'production', SANDBOX: 'on', PORT: '0', HOST: '127.0.0.1' });
    child = production.child;
    const [, productionBase] = await waitFor(production.output, /Gateway on (http:\/\/\S+)\/graphql/);
    const productionInterrupted = performance.now();
    production.child.kill('SIGINT');
    await waitFor(production.output, /SIGINT: draining/);
    expect((await fetch(`${productionBase}/ready`)).status).toBe(503);
    expect(await production.exited).toBe(0);
    const productionTook = performance.now() - productionInterrupted;

    const development = start({ PORT: '0' });
    child = development.child;
    await waitFor(development.output, /Browser apps allowed/);
    const interrupted = performance.now();
    development.child.kill('SIGINT');
    expect(await development.exited).toBe(0);
    // Against the control, measured the same way in the same test: production waits its delay, this one none.
    expect(performance.now() - interrupted).toBeLessThan(productionTook);
  });

  it('SIGINT then a second signal: exits at once with code 1, without waiting for the drain', async () => {
    const { run, base } = await startAgainstSlowSandbox({ DRAIN_DELAY_MS: '60000' });
    run.child.kill('SIGINT');
    await waitFor(run.output, /SIGINT: draining/);
    expect((await fetch(`${base}/ready`)).status).toBe(503);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('SIGTERM again: exiting without waiting');
  });

  it('DRAIN_TIMEOUT_MS: a request still in flight then is ended, and the process exits 0', async () => {
    const { run, base, upstream } = await startAgainstSlowSandbox({ DRAIN_DELAY_MS: '0', DRAIN_TIMEOUT_MS: '300' });
    upstream.scriptFaults([{ kind: 'hang' }]);
    const hanging = fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(QUERY),
    }).then(
      () => 'answered',
      () => 'ended',
    );
    await until(() => upstream.log.count >= 1);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(await hanging).toBe('ended');
  });
});

describe('WORKERS', () => {
  it('2 workers share the port; a dead worker is replaced; a signal to the primary drains both, nothing in flight lost', async () => {
    sandbox = await startSandbox({ port: 0, latencyMs: 800 });
    const upstream = sandbox;
    const run = start({
      PORT: '0',
      UPSTREAM_URL: upstream.url,
      WORKERS: '2',
      CACHE: 'off',
      MAX_ACTIVE_REQUESTS: '64',
      LOG_LEVEL: 'warn',
      DRAIN_DELAY_MS: '300',
    });
    child = run.child;
    const workerPids = async (): Promise<string[]> =>
      [...run.output().matchAll(/Worker \d+ started \(pid (\d+)\)/g)].map((match) => match[1] ?? '');
    await until(async () => (await workerPids()).length === 2 && (run.output().match(/Gateway on /g)?.length ?? 0) === 2);
    const [, base] = /Gateway on (http:\/\/\S+)\/graphql/.exec(run.output()) ?? [];
    if (base === undefined) throw new Error('no address in the banner');
    // Both workers print the same shared address.
    expect(new Set([...run.output().matchAll(/Gateway on (\S+)\/graphql/g)].map((match) => match[1])).size).toBe(1);

    const [firstPid] = await workerPids();
    process.kill(Number(firstPid), 'SIGKILL');
    await until(async () => (await workerPids()).length === 3 && (run.output().match(/Gateway on /g)?.length ?? 0) === 3);
    expect(run.output()).toMatch(/exited \(SIGKILL\); a new one in \d+ ms/);

    const inFlight = Array.from({ length: 20 }, () => postGraphQL<{ websites: { totalCount: number } }>(`${base}/graphql`, QUERY, AUTH));
    await until(() => upstream.log.count >= 20); // all arrived; with 800 ms of latency, still in flight
    run.child.kill('SIGTERM');
    for (const answer of await Promise.all(inFlight)) {
      expect(answer.status).toBe(200);
      expect(dataOf(answer).websites.totalCount).toBeGreaterThanOrEqual(6);
    }
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('SIGTERM: draining 2 workers');
    // Every worker the primary started is gone with it.
    for (const pid of await workerPids()) expect(() => process.kill(Number(pid), 0)).toThrow();
  });
});

describe('tuneHeap', () => {
  it('tunes the heap unless HEAP_GROWING_PERCENT is 0 or node was given the flag itself', () => {
    const set: string[] = [];
    const record = (flags: string) => void set.push(flags);
    expect(tuneHeap(50, ['--enable-source-maps'], record)).toBe(true);
    expect(tuneHeap(0, [], record)).toBe(false);
    expect(tuneHeap(50, ['--heap-growing-percent=80'], record)).toBe(false);
    expect(tuneHeap(50, ['--heap-growing-percent'], record)).toBe(false);
    expect(set).toEqual(['--heap-growing-percent=50']);
  });
});
