// The npm package as a user gets it: `npm pack` of this build, installed into an empty folder with
// `npm install <tarball>` (production dependencies only), and its command run with no other step. On
// the Node that runs the suite: `.ci/run` runs it on 24 and on 22.19, the floor. The install reuses
// npm's cache (--prefer-offline), so it is a copy, not a download, after the first run. `npm test`
// builds dist/ first; the pack skips prepack's build for that reason (the build it would run is checked).
// `npm publish --dry-run` packs it again as a publish would, and says what it would correct.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './docs.js';

const run = promisify(execFile);

interface Manifest {
  name: string;
  version: string;
  license: string;
  private?: boolean;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
  scripts: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
/** Packages only devDependencies need: every copy the lockfile has of them is marked dev. None may be installed. */
const copies = Object.entries(lock.packages)
  .filter(([path]) => path.includes('node_modules/'))
  .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), dev: entry.dev === true }));
const devOnly = [...new Set(copies.filter((copy) => copy.dev).map((copy) => copy.name))].filter((name) =>
  copies.every((copy) => copy.name !== name || copy.dev),
);

const work = mkdtempSync(join(tmpdir(), 'gateway-package-'));
const app = join(work, 'app');
let tarball = '';
let files: string[] = [];
/** The installed command, run as a user runs it: through its shebang, with this Node first on PATH. */
const command = join(app, 'node_modules', '.bin', manifest.name);
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  HOME: process.env.HOME,
  ...extra,
});

beforeAll(async () => {
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
  const [report] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  if (report === undefined) throw new Error(`npm pack reported nothing: ${packed.stdout}`);
  tarball = join(work, report.filename);
  files = report.files.map((file) => file.path);
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), '{ "private": true }\n');
  await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the npm package', () => {
  it('is publishable, with a command, its files listed, and a build before it is packed', () => {
    expect(manifest.private).toBeUndefined();
    expect(manifest.bin).toEqual({ 'analytics-graphql-gateway': 'dist/bin.js' });
    expect(manifest.scripts.prepack).toMatch(/^npm run build\b/);
    expect(manifest.scripts.start).toBe('node dist/bin.js');
  });

  it('holds the built gateway, the schemas and the docs, and no source, test, bench or build state', () => {
    for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'dist/bin.js', 'dist/main.js', 'dist/sandbox/index.js']) {
      expect(files, file).toContain(file);
    }
    expect(files).toContain('schema.graphql');
    expect(files).toContain('docs/configuration.md');
    // The MCP tools' operations, which the compiler does not copy: the build does (src/mcp/operations.ts).
    const operations = readdirSync(join(ROOT, 'src/mcp/operations')).map((file) => `dist/mcp/operations/${file}`);
    expect(operations.length).toBeGreaterThanOrEqual(6);
    for (const file of operations) expect(files, file).toContain(file);
    expect(files.filter((file) => /^(src|test|bench|dist-bench|node_modules)\/|\.map$|tsbuildinfo|^\.ci\//.test(file))).toEqual([]);
  });

  it('passes `npm publish --dry-run`, MIT licensed with its LICENSE, with nothing for npm to correct', async () => {
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    const published = await run('npm', ['publish', '--dry-run', '--ignore-scripts', '--json'], { cwd: ROOT });
    const report = (JSON.parse(published.stdout) as Record<string, { name: string; version: string; files: { path: string }[] }>)[
      manifest.name
    ];
    expect(report).toMatchObject({ name: manifest.name, version: manifest.version });
    expect(report?.files.map((file) => file.path)).toEqual(files);
    // A real publish needs a login, which the dry run says; any other warning is a field npm would fix or drop.
    const warnings = published.stderr
      .split('\n')
      .filter((line) => line.startsWith('npm warn') && !line.includes('requires you to be logged in'));
    expect(warnings).toEqual([]);
  });

  it("is the tarball the README's and docs/deploy.md's npx lines run", () => {
    const name = tarball.slice(work.length + 1);
    expect(name).toBe(`${manifest.name}-${manifest.version}.tgz`);
    for (const doc of ['README.md', 'docs/deploy.md']) expect(readFileSync(join(ROOT, doc), 'utf8'), doc).toContain(`npx ./${name}`);
  });

  it('installs no devDependency', () => {
    expect(devOnly.length).toBeGreaterThan(50);
    expect(devOnly.filter((name) => existsSync(join(app, 'node_modules', name)))).toEqual([]);
    expect(existsSync(join(app, 'node_modules', 'graphql-yoga'))).toBe(true);
  });

  it('has a command that prints its version and its help', async () => {
    expect((await run(command, ['--version'], { env: env() })).stdout).toBe(`${manifest.version}\n`);
    const help = (await run(command, ['--help'], { env: env() })).stdout;
    expect(help).toMatch(/^Usage: analytics-graphql-gateway/);
    expect(help).toContain('UPSTREAM_URL');
    const wrong = await run(command, ['--port=4000'], { env: env() }).catch((error: { code: number; stderr: string }) => error);
    expect(wrong).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown argument --port=4000') });
  });

  it.each(['20.11.1', '22.18.0'])('refuses on Node %s, older than engines, with one line and nothing imported', async (version) => {
    // The version Node reports, set before the command runs: what an older Node would say.
    const fake = `--import=data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`;
    const refused = await run(command, [], { env: env({ NODE_OPTIONS: fake, PORT: '0' }) }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    const floor = manifest.engines.node.replace(/^>=\s*/, '');
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect('stderr' in refused && refused.stderr).toBe(
      `analytics-graphql-gateway needs Node.js ${floor}.0 or newer (24 recommended); this is Node.js ${version}.\n`,
    );
  });

  it('serves the embedded sandbox with no other step, names its version, and drains on SIGTERM', async () => {
    const child = spawn(command, [], { env: env({ PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      let match: RegExpExecArray | null = null;
      for (let i = 0; i < 600 && match === null && child.exitCode === null; i++) {
        match = /Gateway on (http:\/\/\S+)\/graphql .*version (\S+), Node\.js (\S+)/.exec(output);
        if (match === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const [, base, version, node] = match ?? [];
      expect({ version, node }, output).toEqual({ version: manifest.version, node: process.versions.node });
      const answer = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-key-1' },
        body: JSON.stringify({ query: '{ websites { totalCount } }' }),
      });
      const body = (await answer.json()) as { data?: { websites: { totalCount: number } } };
      expect(body.data?.websites.totalCount).toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
