// A live dashboard across a gateway restart, as an operator runs one: the real gateway process (the
// built entry point) against a sandbox, a real `graphql-sse` client with its default retries, a real
// SIGTERM, traffic added while the gateway is away, and a new process on the same port. The drain
// closes the stream's connection without `complete`, so the client takes it for a network error and
// subscribes again with its backoff; the new process's first result carries the new figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from 'graphql-sse';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_1 } from '../fixture.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startGateway(env: Record<string, string>): Running {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exited };
}

/** The exit code, or 'still running' after `timeoutMs`. */
const exitWithin = (run: Running, timeoutMs: number): Promise<number | null | 'still running'> =>
  Promise.race([run.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), timeoutMs))]);

async function waitFor(output: () => string, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(output());
    if (match) return match;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${output()}`);
}

const LIVE = `subscription Live($id: ID!) {
  website(id: $id) { id today: stats(name: VISITOR, period: TODAY) { nodes { value count } } }
}`;

interface LiveData {
  website: { id: string; today: { nodes: { value: string; count: number }[] } } | null;
}

const running: Running[] = [];
let sandbox: Sandbox | undefined;
let client: Client | undefined;
afterEach(async () => {
  client?.dispose();
  client = undefined;
  for (const each of running.splice(0)) each.child.kill('SIGKILL');
  await sandbox?.close();
  sandbox = undefined;
});

describe('a live subscription across a gateway restart', () => {
  it('after a gateway restart the graphql-sse client resubscribes and has current data within 10 s', { timeout: 60_000 }, async () => {
    // Today's figures fixed (they grow with the clock otherwise): only the traffic added moves them.
    sandbox = await startSandbox({ port: 0, liveToday: false });
    const upstream = sandbox;
    // The drain's delay shortened from 5 s to 1 s only to keep the test short: the client's stream is
    // closed when the drain starts either way, and its retries back off from 1 s (+ up to 3 s).
    const env = { UPSTREAM_URL: upstream.url, LOG_LEVEL: 'warn', DRAIN_DELAY_MS: '1000' };
    const first = startGateway({ ...env, PORT: '0' });
    running.push(first);
    const [, endpoint, port] = await waitFor(first.output, /Gateway on (http:\/\/127\.0\.0\.1:(\d+)\/graphql)/);
    if (endpoint === undefined || port === undefined) throw new Error('no address in the banner');

    // Its default settings: 5 retries, a randomised exponential backoff from 1 s.
    client = createClient({ url: endpoint, headers: { authorization: `Bearer ${KEY_1}` } });
    const events: { count: number; at: number }[] = [];
    const ends: string[] = [];
    const connecting: boolean[] = [];
    client.subscribe<LiveData>(
      { query: LIVE, variables: { id: '1' } },
      {
        next: (result) => void events.push({ count: result.data?.website?.today.nodes[0]?.count ?? -1, at: Date.now() }),
        error: (error) => void ends.push(`error: ${error instanceof Error ? error.message : JSON.stringify(error)}`),
        complete: () => void ends.push('complete'),
      },
      { connecting: (reconnecting) => void connecting.push(reconnecting) },
    );
    const until = async (check: () => boolean, what: string, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; events ${JSON.stringify(events)}, ends ${ends}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    await until(() => events.length > 0, 'the first result', 10_000);
    const before = events[0]?.count ?? -1;
    expect(before).toBeGreaterThanOrEqual(0);

    // The handlers are installed before the banner (main.ts): the signal drains.
    first.child.kill('SIGTERM');
    await waitFor(first.output, /SIGTERM: draining/);
    const added = await fetch(`${upstream.url}/__sandbox/traffic`, { method: 'POST', body: JSON.stringify({ websiteId: 1, visitors: 9 }) });
    expect(added.status).toBe(204);
    // Nothing held it: the stream was closed when the drain started, not at DRAIN_TIMEOUT_MS (30 s).
    expect(await exitWithin(first, 10_000)).toBe(0);

    const restartedAt = Date.now();
    const second = startGateway({ ...env, PORT: port });
    running.push(second);
    await waitFor(second.output, new RegExp(`Gateway on http://127\\.0\\.0\\.1:${port}/graphql`));
    await until(() => events.some((event) => event.count === before + 9), 'a result with the new figures', 20_000);
    const current = events.find((event) => event.count === before + 9);
    expect((current?.at ?? Number.POSITIVE_INFINITY) - restartedAt).toBeLessThanOrEqual(10_000);
    // Every result the client had was the old figures or the new ones, the stream never ended, and it
    // connected again (as a retry: the first connection's end was a network error to it).
    expect(events.map((event) => event.count).every((count) => count === before || count === before + 9)).toBe(true);
    expect(ends).toEqual([]);
    expect(connecting[0]).toBe(false);
    expect(connecting.slice(1).length).toBeGreaterThanOrEqual(1);
    expect(connecting.slice(1).every((reconnecting) => reconnecting)).toBe(true);

    second.child.kill('SIGTERM');
    expect(await exitWithin(second, 10_000)).toBe(0);
    expect(ends).toEqual([]);
  });
});
