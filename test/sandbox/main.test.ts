// `npm run sandbox` end to end: the CLI compiled as the build compiles it, run as a child process.
// It is compiled into a temporary directory (not dist/) so the test runs the current source
// whatever state the rest of the checkout's build is in.
import { spawn, execFile } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, optionsFromEnv } from '../../src/sandbox/env-options.js';
import { KEY_1, call } from './http.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let outDir: string;
let mainJs: string;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'sandbox-cli-'));
  const config = join(outDir, 'tsconfig.json');
  await writeFile(
    config,
    JSON.stringify({
      extends: join(root, 'tsconfig.build.json'),
      compilerOptions: {
        rootDir: join(root, 'src'),
        outDir: join(outDir, 'dist'),
        typeRoots: [join(root, 'node_modules/@types')],
        incremental: false,
        sourceMap: false,
      },
      include: [],
      files: [join(root, 'src/sandbox/main.ts')],
    }),
  );
  await promisify(execFile)(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config]);
  mainJs = join(outDir, 'dist/sandbox/main.js');
}, 60_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

function run(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [mainJs], { env: { PATH: process.env.PATH ?? '', ...env } });
}

/** Resolves with the printed URL once the banner is out. */
function started(child: ChildProcessWithoutNullStreams): Promise<{ url: string; banner: () => string }> {
  let stdout = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match?.[1] && stdout.includes('\n')) resolve({ url: match[1], banner: () => stdout });
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stdout}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('npm run sandbox (dist/sandbox/main.js)', () => {
  it('listens on SANDBOX_PORT (0 = any), prints its URL and keys, and exits 0 on SIGTERM', async () => {
    const child = run({ SANDBOX_PORT: '0', SANDBOX_TODAY: '2026-03-15' });
    const done = exited(child);
    const { url, banner } = await started(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner()).toContain(`${url}/api/v1`);
    expect(banner()).toContain('sandbox-key-1');
    expect(banner()).toContain('sandbox-key-2');
    const reply = await call<{ meta: { total: number } }>(url, '/api/v1/websites', { key: KEY_1 });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.total).toBe(7);
    expect((await call(url, '/__sandbox/health')).body).toMatchObject({ today: '2026-03-15' });
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('applies the knob variables and closes on SIGINT', async () => {
    const child = run({
      SANDBOX_PORT: '0',
      SANDBOX_LATENCY_MS: '5',
      SANDBOX_JITTER_MS: '2',
      SANDBOX_FAULT_RATE: '0',
      SANDBOX_RATE_LIMIT: '120',
    });
    const done = exited(child);
    const { url } = await started(child);
    expect((await call(url, '/__sandbox/knobs')).body).toEqual({
      latencyMs: 5,
      jitterMs: 2,
      faultRate: 0,
      rateLimit: { limit: 120, windowMs: 60_000 },
    });
    expect((await call(url, '/api/v1/websites')).headers.get('x-ratelimit-limit')).toBe('120');
    child.kill('SIGINT');
    expect((await done).code).toBe(0);
  });

  it('plays the older install with SANDBOX_DIALECT=legacy', async () => {
    const child = run({ SANDBOX_PORT: '0', SANDBOX_TODAY: '2026-03-15', SANDBOX_DIALECT: 'legacy' });
    const done = exited(child);
    const { url, banner } = await started(child);
    expect(banner()).toContain('dialect: legacy');
    const reply = await call<{ per_page: string }>(url, '/api/v1/stats/1?name=os&from=2026-03-01&to=2026-03-15', { key: KEY_1 });
    expect(reply.status).toBe(200);
    expect(reply.body.per_page).toBe('10');
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('accepts SANDBOX_TENANT_KEYS more keys of user 1, and no more', async () => {
    const child = run({ SANDBOX_PORT: '0', SANDBOX_TODAY: '2026-03-15', SANDBOX_TENANT_KEYS: '3' });
    const done = exited(child);
    const { url, banner } = await started(child);
    expect(banner()).toContain('sandbox-tenant-1 to sandbox-tenant-3 (user 1)');
    const own = await call<{ data: { domain: string }[] }>(url, '/api/v1/websites', { key: KEY_1 });
    const tenant = await call<{ data: { domain: string }[] }>(url, '/api/v1/websites', { key: 'sandbox-tenant-3' });
    expect(tenant.status).toBe(200);
    expect(tenant.body.data.map((site) => site.domain)).toEqual(own.body.data.map((site) => site.domain));
    expect((await call(url, '/api/v1/websites', { key: 'sandbox-tenant-4' })).status).toBe(401);
    expect((await call(url, '/api/v1/websites', { key: 'sandbox-tenant-0' })).status).toBe(401);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it.each([
    ['SANDBOX_TENANT_KEYS', '-1'],
    ['SANDBOX_TENANT_KEYS', '2.5'],
    ['SANDBOX_TENANT_KEYS', '100001'],
    ['SANDBOX_PORT', 'abc'],
    ['SANDBOX_PORT', '70000'],
    ['SANDBOX_TODAY', '2026-02-30'],
    ['SANDBOX_LATENCY_MS', '-5'],
    ['SANDBOX_FAULT_RATE', '1.5'],
    ['SANDBOX_RATE_LIMIT', '2.5'],
    ['SANDBOX_DIALECT', 'modern'],
  ])('exits 2 with a clear message when %s=%s', async (name, value) => {
    const { code, stderr } = await exited(run({ SANDBOX_PORT: '0', [name]: value }));
    expect(code).toBe(2);
    expect(stderr).toContain(name);
    expect(stderr).toContain(JSON.stringify(value));
  });
});

describe('optionsFromEnv', () => {
  it('defaults to 127.0.0.1:4010 and real time, with every knob off', () => {
    expect(optionsFromEnv({})).toEqual({ port: 4010, host: '127.0.0.1' });
    expect(optionsFromEnv({ SANDBOX_PORT: '', SANDBOX_TODAY: ' ' })).toEqual({ port: 4010, host: '127.0.0.1' });
  });

  it('reads every variable', () => {
    expect(
      optionsFromEnv({
        SANDBOX_PORT: '0',
        SANDBOX_HOST: '0.0.0.0',
        SANDBOX_TODAY: '2024-02-29',
        SANDBOX_SEED: '42',
        SANDBOX_LATENCY_MS: '12.5',
        SANDBOX_JITTER_MS: '3',
        SANDBOX_FAULT_RATE: '0.25',
        SANDBOX_RATE_LIMIT: '0',
      }),
    ).toEqual({ port: 0, host: '0.0.0.0', today: '2024-02-29', seed: 42, latencyMs: 12.5, jitterMs: 3, faultRate: 0.25, rateLimit: null });
    expect(optionsFromEnv({ SANDBOX_RATE_LIMIT: '60' }).rateLimit).toEqual({ limit: 60, windowMs: 60_000 });
  });

  it('reads SANDBOX_DIALECT', () => {
    expect(optionsFromEnv({ SANDBOX_DIALECT: 'legacy' }).dialect).toBe('legacy');
    expect(optionsFromEnv({ SANDBOX_DIALECT: ' contract ' }).dialect).toBe('contract');
    expect(optionsFromEnv({ SANDBOX_DIALECT: '' })).not.toHaveProperty('dialect');
    for (const bad of ['Legacy', 'v3', 'contract,legacy']) {
      expect(() => optionsFromEnv({ SANDBOX_DIALECT: bad })).toThrow(ConfigError);
      expect(() => optionsFromEnv({ SANDBOX_DIALECT: bad })).toThrow(
        `SANDBOX_DIALECT must be contract or legacy, got ${JSON.stringify(bad)}`,
      );
    }
  });

  it('throws a ConfigError naming the variable', () => {
    expect(() => optionsFromEnv({ SANDBOX_JITTER_MS: 'lots' })).toThrow(ConfigError);
    expect(() => optionsFromEnv({ SANDBOX_SEED: '1e3' })).toThrow(/SANDBOX_SEED/);
  });
});
