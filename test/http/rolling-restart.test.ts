// A rolling restart as an operator runs one: two gateways (real processes, the built entry point)
// behind a real HAProxy that health-checks `GET /ready` and retries only when a connection fails; each
// gateway gets a real SIGTERM in turn and is started again on its port, under steady load. Not one
// request may fail, with another process keeping the CPU busy or not. The HAProxy configuration is read
// from docs/operations.md#behind-haproxy.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { describeNeeding, pathOf } from '../needs.js';
import { freePort } from '../ports.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * The configuration of docs/operations.md#behind-haproxy, as it is printed there, with the test's
 * addresses and checks every 200 ms instead of every second (a shorter drain).
 */
function haproxyConfig(frontendPort: number, gatewayPorts: readonly number[]): string {
  const operations = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8');
  const block = /```haproxy\n([\s\S]*?)```/.exec(operations)?.[1];
  if (block === undefined) throw new Error('docs/operations.md has no haproxy block');
  const [first, second] = gatewayPorts;
  const config = block
    .replace('bind 127.0.0.1:8080', `bind 127.0.0.1:${frontendPort}`)
    .replace('127.0.0.1:4001 check', `127.0.0.1:${first} check`)
    .replace('127.0.0.1:4002 check', `127.0.0.1:${second} check`)
    .replace('default-server inter 1s ', 'default-server inter 200ms ');
  // Each of the four changes was made: the documented block still has what the test changes.
  for (const line of [`bind 127.0.0.1:${frontendPort}`, `127.0.0.1:${first} check`, `127.0.0.1:${second} check`, 'inter 200ms']) {
    if (!config.includes(line))
      throw new Error(`docs/operations.md's haproxy block changed: no "${line}" once the test's addresses are in`);
  }
  return config;
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function run(command: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(command, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exited };
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

const answers200 = (url: string) => () =>
  fetch(url).then(
    async (response) => {
      await response.body?.cancel();
      return response.status === 200;
    },
    () => false,
  );

const running: Running[] = [];
let sandbox: Sandbox | undefined;
let configDir: string | undefined;
afterAll(async () => {
  for (const each of running) each.child.kill('SIGKILL');
  await sandbox?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

// Skipped without haproxy outside CI (test/needs.ts).
describeNeeding('haproxy')('rolling restart behind HAProxy', () => {
  it('restarts each gateway in turn under steady load with 0 failed requests', { timeout: 60_000 }, async () => {
    sandbox = await startSandbox({ port: 0, latencyMs: 40 });
    const upstream = sandbox;
    const gatewayPorts = [await freePort(), await freePort()];
    const frontendPort = await freePort();
    const startGateway = (port: number): Running => {
      const gateway = run(process.execPath, [MAIN], {
        PORT: String(port),
        UPSTREAM_URL: upstream.url,
        CACHE: 'off',
        LOG_LEVEL: 'info',
        // Longer than HAProxy can take to see the 503: fall × (inter + timeout check) = 2 × 1.2 s.
        DRAIN_DELAY_MS: '2500',
        DRAIN_TIMEOUT_MS: '10000',
      });
      running.push(gateway);
      return gateway;
    };
    const gateways = gatewayPorts.map(startGateway);
    for (const port of gatewayPorts) await until(answers200(`http://127.0.0.1:${port}/ready`));

    configDir = mkdtempSync(join(tmpdir(), 'haproxy-'));
    const configPath = join(configDir, 'haproxy.cfg');
    writeFileSync(configPath, haproxyConfig(frontendPort, gatewayPorts));
    const haproxy = run(pathOf('haproxy'), ['-db', '-f', configPath], {});
    running.push(haproxy);
    const endpoint = `http://127.0.0.1:${frontendPort}/graphql`;
    await until(answers200(`http://127.0.0.1:${frontendPort}/ready`));

    // Steady load: 8 clients, each sending its next request as soon as the last one is answered.
    let loading = true;
    let answered = 0;
    const failures: string[] = [];
    const client = async (): Promise<void> => {
      while (loading) {
        try {
          const response = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-key-1' },
            body: JSON.stringify({ query: '{ websites { totalCount } }' }),
          });
          const text = await response.text();
          const body = (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as {
            errors?: unknown;
            data?: { websites?: { totalCount?: number } };
          };
          if (response.status !== 200 || body.errors !== undefined || body.data?.websites?.totalCount === undefined) {
            failures.push(`${response.status} ${text.slice(0, 200)}`);
          } else answered++;
        } catch (error) {
          failures.push(error instanceof Error ? `${error.message}: ${String((error as { cause?: unknown }).cause)}` : String(error));
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const restarted: Running[] = [];
    for (const [i, port] of gatewayPorts.entries()) {
      const old = gateways[i];
      if (old === undefined) throw new Error('no gateway to restart');
      old.child.kill('SIGTERM');
      expect(await old.exited).toBe(0);
      const fresh = startGateway(port);
      restarted.push(fresh);
      await until(answers200(`http://127.0.0.1:${port}/ready`));
      // HAProxy takes it back after 2 passing checks; let it serve before the next one stops.
      await until(() => fresh.output().includes('graphql request'));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    loading = false;
    await Promise.all(clients);

    // HAProxy's own lines (a server going down or up, and why) say what a failed request met.
    expect(failures.slice(0, 5), haproxy.output()).toEqual([]);
    expect(failures).toHaveLength(0);
    expect(answered).toBeGreaterThan(100);
    // Both old gateways served before their restart, and both new ones after it.
    for (const gateway of [...gateways, ...restarted]) expect(gateway.output()).toContain('graphql request');
  });
});
