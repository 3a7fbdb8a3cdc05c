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

/** dist/main.js with WORKERS=2 and METRICS_PORT, once both workers serve; its output so far, read live. */
async function startWorkers(): Promise<{ proc: ChildProcess; base: string; metricsPort: number; output: () => string }> {
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
  await banners(proc, () => output, 2);
  const [, base] = /Gateway on (http:\/\/\S+)\/graphql/.exec(output) ?? [];
  if (base === undefined) throw new Error(`no address in the banner:\n${output}`);
  return { proc, base, metricsPort, output: () => output };
}

/** Resolves once the workers printed `count` banners in all, as each line comes (the test's timeout is the bound). */
function banners(proc: ChildProcess, output: () => string, count: number): Promise<void> {
  const enough = (): boolean => (output().match(/Gateway on /g)?.length ?? 0) >= count;
  if (enough()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!enough()) return;
      proc.stdout?.off('data', check);
      resolve();
    };
    proc.stdout?.on('data', check);
    proc.once('exit', () => reject(new Error(`exited before ${count} banners:\n${output()}`)));
  });
}

/** Scrapes until `done` says the scrape shows what is awaited (a worker's report arrives on its own time). */
async function scrapeUntil(metricsPort: number, done: (text: string) => boolean): Promise<string> {
  for (;;) {
    const { status, text } = await scrape(metricsPort);
    expect(status).toBe(200);
    if (done(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `count` requests, each on a new connection: the primary hands them to the workers in turn. */
async function requests(base: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answer = await postGraphQL<unknown>(
      `${base}/graphql`,
      { query: '{ websites { totalCount } }' },
      { authorization: `Bearer ${KEY_1}`, connection: 'close' },
    );
    expect(answer.status).toBe(200);
  }
}

const scrape = async (metricsPort: number) => {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  return { status: response.status, text: await response.text() };
};

it('METRICS_PORT answers the sum over all workers on every scrape', async () => {
  const { base, metricsPort } = await startWorkers();
  await requests(base, 6);
  for (let i = 0; i < 3; i++) expect(requestCount((await scrape(metricsPort)).text)).toBe(6);
}, 60_000);

it("keeps a dead worker's counts, and a frozen worker costs its own series, not the scrape", async () => {
  const { proc, base, metricsPort, output } = await startWorkers();
  await requests(base, 8);
  expect(requestCount((await scrape(metricsPort)).text)).toBe(8);
  const pids = [...output().matchAll(/Worker (\d+) started \(pid (\d+)\)/g)].map((match) => Number(match[2]));
  expect(pids).toHaveLength(2);

  // One dies (as in a crash): the primary starts another; the sum keeps what the dead one had counted.
  process.kill(pids[0] as number, 'SIGKILL');
  await banners(proc, output, 3);
  expect(output()).toMatch(/Worker 3 started/);
  const afterDeath = await scrape(metricsPort);
  expect(afterDeath.status).toBe(200);
  expect(requestCount(afterDeath.text)).toBe(8);
  await requests(base, 2);
  expect(requestCount((await scrape(metricsPort)).text)).toBe(10);

  // One freezes: the scrape still answers, with its counts as last seen, and says one worker is silent.
  const frozen = pids[1] as number;
  process.kill(frozen, 'SIGSTOP');
  try {
    const whileFrozen = await scrape(metricsPort);
    expect(whileFrozen.status).toBe(200);
    expect(requestCount(whileFrozen.text)).toBe(10);
    expect(whileFrozen.text).toMatch(/^gateway_metrics_workers_silent 1$/m);
  } finally {
    process.kill(frozen, 'SIGCONT');
  }
  // Thawed, it answers the primary again: no worker silent, the same sum.
  const thawed = await scrapeUntil(metricsPort, (text) => /^gateway_metrics_workers_silent 0$/m.test(text));
  expect(requestCount(thawed)).toBe(10);
}, 60_000);
