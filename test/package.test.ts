// The npm package as a user gets it: `npm pack` of this build, installed into an empty folder with
// `npm install <tarball>` (production dependencies only, without one warning, at the lockfile's
// versions), and its command run with no other step, also through the README's npx line. On
// the Node that runs the suite: `.ci/run` runs it on 24 and on 22.19, the floor. The install reuses
// npm's cache (--prefer-offline), so it is a copy, not a download, after the first run. `npm test`
// builds dist/ first; the pack skips prepack's build for that reason (the build it would run is checked).
// `npm publish --dry-run` packs it again as a publish would, and says what it would correct.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
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
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; version?: string }>;
};
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
/** Packages only devDependencies need: every copy the lockfile has of them is marked dev. None may be installed. */
const copies = Object.entries(lock.packages)
  .filter(([path]) => path.includes('node_modules/'))
  .map(([path, entry]) => ({ name: nameOf(path), dev: entry.dev === true }));
const devOnly = [...new Set(copies.filter((copy) => copy.dev).map((copy) => copy.name))].filter((name) =>
  copies.every((copy) => copy.name !== name || copy.dev),
);

/** Each package name with its versions, sorted and joined: `1.2.3` or `1.2.3, 2.0.0`. */
function versionsByName(copies: readonly { name: string; version?: string | undefined }[]): Map<string, string> {
  const byName = new Map<string, Set<string>>();
  for (const { name, version = '?' } of copies) byName.set(name, (byName.get(name) ?? new Set()).add(version));
  return new Map([...byName].map(([name, versions]) => [name, [...versions].sort().join(', ')]));
}

/** Every package installed under a node_modules folder, nested ones included. */
function installedPackages(folder: string): { name: string; version: string }[] {
  if (!existsSync(folder)) return [];
  const names = readdirSync(folder)
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) => (entry.startsWith('@') ? readdirSync(join(folder, entry)).map((scoped) => `${entry}/${scoped}`) : [entry]));
  return names.flatMap((name) => {
    const manifestPath = join(folder, name, 'package.json');
    if (!existsSync(manifestPath)) return [];
    const { version } = JSON.parse(readFileSync(manifestPath, 'utf8')) as { version: string };
    return [{ name, version }, ...installedPackages(join(folder, name, 'node_modules'))];
  });
}

/** The address the gateway's banner names, once it is printed. */
async function bannerOf(output: () => string, child: ChildProcess): Promise<string> {
  for (let i = 0; i < 2400 && child.exitCode === null; i++) {
    const match = /Gateway on (http:\/\/\S+)\/graphql/.exec(output());
    if (match?.[1] !== undefined) return match[1];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no banner; output:\n${output()}`);
}

const work = mkdtempSync(join(tmpdir(), 'gateway-package-'));
const app = join(work, 'app');
let tarball = '';
let files: string[] = [];
/** What `npm install` of the tarball printed on stderr. */
let installed = '';
/**
 * `npm publish --dry-run`, run beside the install: it packs in the project's folder, the install works in
 * its own, and each takes seconds of waiting on npm.
 */
let published: Promise<{ stdout: string; stderr: string }> | undefined;
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
  const publishing = run('npm', ['publish', '--dry-run', '--ignore-scripts', '--json'], { cwd: ROOT });
  // Awaited by its test; the install going wrong must not leave it unhandled.
  publishing.catch(() => undefined);
  published = publishing;
  // As a user installs it: no flag but the cache's (npm runs no install script by itself).
  installed = (await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app })).stderr;
}, 240_000);
// The installed tree is thousands of files: on a machine busy with disk work, removing it takes longer than
// the default hook's 20 s.
afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

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
    if (published === undefined) throw new Error('the package was not packed');
    const { stdout, stderr } = await published;
    const report = (JSON.parse(stdout) as Record<string, { name: string; version: string; files: { path: string }[] }>)[manifest.name];
    expect(report).toMatchObject({ name: manifest.name, version: manifest.version });
    expect(report?.files.map((file) => file.path)).toEqual(files);
    // A real publish needs a login, which the dry run says; any other warning is a field npm would fix or drop.
    const warnings = stderr.split('\n').filter((line) => line.startsWith('npm warn') && !line.includes('requires you to be logged in'));
    expect(warnings).toEqual([]);
  });

  it('installs without one `npm warn` line', () => {
    expect(installed.split('\n').filter((line) => line.startsWith('npm warn'))).toEqual([]);
  });

  it('installs the versions of the lockfile, the ones the suite ran', () => {
    const locked = versionsByName(
      Object.entries(lock.packages)
        .filter(([path, entry]) => path.includes('node_modules/') && entry.dev !== true)
        .map(([path, entry]) => ({ name: nameOf(path), version: entry.version })),
    );
    const ours = versionsByName(installedPackages(join(app, 'node_modules')).filter((copy) => copy.name !== manifest.name));
    expect(ours.size).toBeGreaterThan(100);
    const differing = [...new Set([...locked.keys(), ...ours.keys()])]
      .filter((name) => locked.get(name) !== ours.get(name))
      .map((name) => `${name}: lockfile ${locked.get(name) ?? 'none'}, installed ${ours.get(name) ?? 'none'}`);
    expect(differing).toEqual([]);
  });

  it("runs from the README's and docs/deploy.md's npx line, which names no version, without a terminal", async () => {
    const line = `npx --yes ./${manifest.name}-*.tgz`;
    for (const doc of ['README.md', 'docs/deploy.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      expect(text, doc).toContain(line);
      expect(text, doc).not.toContain(`${manifest.name}-${manifest.version}.tgz`);
    }
    // The line as a shell runs it, in the folder of the tarball, with no terminal (stdin closed).
    // This environment (npm's certificates and proxy, if any), from npm's cache as the install above.
    const child = spawn('sh', ['-c', line], {
      cwd: work,
      env: { ...process.env, ...env({ PORT: '0', npm_config_prefer_offline: 'true' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const base = await bannerOf(() => output, child);
      const answer = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-key-1' },
        body: JSON.stringify({ query: '{ websites { totalCount } }' }),
      });
      expect(answer.status, output).toBe(200);
      await answer.arrayBuffer();
      // The shell and npx stop on the signal too: the gateway's own exit is the test above's.
      process.kill(-(child.pid ?? 0), 'SIGTERM');
      await exited;
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid ?? 0), 'SIGKILL');
    }
  }, 240_000);

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
