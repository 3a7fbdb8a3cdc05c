// A fresh machine with no redis-server, or no chromium (test/suite-skip.ts): vitest run in a child
// process whose PATH holds no redis-server (or whose CHROMIUM_PATH names no file), on the suite and
// one other file. Outside CI the run passes, saying at its start and under its summary that the suite
// was skipped, how many tests, why and what to install; with CI=true it fails at once with that one
// error.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_INSTALL, BROWSER_SUITE, REDIS_INSTALL, REDIS_SUITE } from './suite-skip.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitestCli = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const OTHER_SUITE = 'test/upstream/dialect.test.ts';
// Each test starts a whole vitest run (its start-up, the two files' transforms): seconds alone, more on a busy machine.
const RUN_TIMEOUT_MS = 90_000;

interface Run {
  code: number | null;
  output: string;
}

/** vitest on `suite` and one other file, with only `env` (and an empty directory as PATH: node is run by its path). */
function runVitest(path: string, env: Record<string, string>, suite = REDIS_SUITE): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [vitestCli, 'run', suite, OTHER_SUITE], {
      cwd: root,
      env: { PATH: path, HOME: tmpdir(), NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('npm test on a machine without redis-server', () => {
  let emptyPath: string;
  beforeAll(async () => {
    emptyPath = await mkdtemp(`${tmpdir()}/no-redis-`);
  });
  afterAll(() => rm(emptyPath, { recursive: true, force: true }));

  it(
    'outside CI: the Redis suite is skipped, said once at the start and once under the summary, and the run passes',
    async () => {
      const { code, output } = await runVitest(emptyPath, {});
      expect(code, output).toBe(0);
      const notices = output.split('\n').filter((line) => line.includes('Redis suite skipped'));
      expect(notices, output).toHaveLength(2);
      const [start, end] = notices as [string, string];
      expect(output.indexOf(start)).toBeLessThan(output.indexOf('Test Files'));
      expect(output.indexOf(end)).toBeGreaterThan(output.indexOf('Test Files'));
      for (const line of notices) {
        expect(line).toContain('redis-server is not on PATH');
        expect(line).toContain(REDIS_INSTALL);
      }
      // The count it gives is the summary's own.
      const skipped = /Redis suite skipped: (\d+) tests/.exec(end)?.[1];
      expect(Number(skipped)).toBeGreaterThan(0);
      expect(output).toMatch(new RegExp(`Tests\\s+\\d+ passed \\| ${skipped} skipped`));
      expect(output).not.toMatch(/TypeError|FAIL/);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'with CI=true: the Redis suite fails at once with one error saying what to install',
    async () => {
      const { code, output } = await runVitest(emptyPath, { CI: 'true' });
      expect(code, output).toBe(1);
      expect(output).toContain(`redis-server is not on PATH, and CI is set: the Redis suite must run here (install it: ${REDIS_INSTALL}).`);
      expect(output).toMatch(/Test Files\s+1 failed \| 1 passed/);
      expect(output).not.toMatch(/TypeError/);
      expect(output).not.toContain('Redis suite skipped');
    },
    RUN_TIMEOUT_MS,
  );
});

describe('npm test on a machine without chromium', () => {
  let emptyPath: string;
  beforeAll(async () => {
    emptyPath = await mkdtemp(`${tmpdir()}/no-chromium-`);
  });
  afterAll(() => rm(emptyPath, { recursive: true, force: true }));
  const missing = { CHROMIUM_PATH: '/nonexistent/chromium' };

  it(
    'outside CI: the browser suite is skipped, said once at the start and once under the summary, and the run passes',
    async () => {
      const { code, output } = await runVitest(emptyPath, missing, BROWSER_SUITE);
      expect(code, output).toBe(0);
      const notices = output.split('\n').filter((line) => line.includes('Browser suite skipped'));
      expect(notices, output).toHaveLength(2);
      for (const line of notices) {
        expect(line).toContain('chromium is not at /nonexistent/chromium');
        expect(line).toContain(BROWSER_INSTALL);
      }
      const skipped = /Browser suite skipped: (\d+) tests/.exec(notices[1] ?? '')?.[1];
      expect(Number(skipped)).toBeGreaterThan(0);
      expect(output).toMatch(new RegExp(`Tests\\s+\\d+ passed \\| ${skipped} skipped`));
      expect(output).not.toContain('Redis suite');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'with CI=true: the browser suite fails at once with one error saying what to install',
    async () => {
      const { code, output } = await runVitest(emptyPath, { ...missing, CI: 'true' }, BROWSER_SUITE);
      expect(code, output).toBe(1);
      expect(output).toContain(
        `chromium is not at /nonexistent/chromium, and CI is set: the browser suite must run here (install it: ${BROWSER_INSTALL}).`,
      );
      expect(output).toMatch(/Test Files\s+1 failed \| 1 passed/);
      expect(output).not.toContain('Browser suite skipped');
    },
    RUN_TIMEOUT_MS,
  );
});
