// A newcomer's machine, which lacks some of the programs outside npm that tests spawn, and CI's, which
// must have them all (test/system-programs.ts, test/needs.ts, test/suite-skip.ts). vitest runs in a
// child process on a tiny project (test/programs/: two tests that need each program, one that needs
// none), its PATH a folder of links to every program this machine has but the one hidden. Outside CI
// the run passes, saying at its start and under its summary what was skipped, why and what to install;
// with CI=true it fails at once, naming it. Then every test file that spawns a program is checked to
// be listed with it and to go through test/needs.ts, so that a new one cannot forget its skip.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProgramName, SYSTEM_PROGRAMS, installLine, programPath } from './system-programs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitestCli = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const PROJECT = 'test/programs/vitest.config.ts';
const FIXTURE = 'test/programs/needs.fixture.ts';
// A vitest start-up and one small file; more on a busy machine.
const RUN_TIMEOUT_MS = 60_000;
const ALL = SYSTEM_PROGRAMS.map((program) => program.command);

interface Run {
  code: number | null;
  output: string;
}

/** node with these arguments, in the repository, with only `env` (node itself is run by its path). */
function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { HOME: tmpdir(), NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'agw-programs-'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

/** A folder of links to the programs this machine has, but not `hidden`: a PATH without them. */
async function pathWithout(hidden: readonly ProgramName[]): Promise<string> {
  const dir = await mkdtemp(join(folder, 'bin-'));
  for (const name of ALL) {
    const path = programPath(name);
    if (path !== null && !hidden.includes(name)) await symlink(path, join(dir, name));
  }
  return dir;
}

/** The lines that name `name` as missing. */
const noticesOf = (output: string, name: ProgramName): string[] =>
  output.split('\n').filter((line) => line.includes(`${name} is not on PATH`));

describe('npm test on a machine without one of the programs', () => {
  for (const hidden of ALL) {
    it(
      `outside CI, without ${hidden}: its tests are skipped, said at the start and under the summary with its package, and the run passes`,
      async () => {
        // What this machine lacks anyway is missing too.
        const missing = ALL.filter((name) => name === hidden || programPath(name) === null);
        const { code, output } = await run([vitestCli, 'run', '--config', PROJECT], { PATH: await pathWithout([hidden]) });
        expect(code, output).toBe(0);
        const summary = output.indexOf('Test Files');
        const notices = noticesOf(output, hidden);
        expect(notices, output).toHaveLength(2);
        const [start = '', end = ''] = notices;
        expect(output.indexOf(start)).toBeLessThan(summary);
        expect(output.lastIndexOf(end)).toBeGreaterThan(summary);
        expect(start).toContain(`the tests of ${FIXTURE} that need it are skipped`);
        expect(end).toContain(`2 tests skipped, in ${FIXTURE}`);
        for (const line of notices) expect(line).toContain(`(install: ${installLine([hidden])})`);
        // Both times, one line to install all that is missing; the summary counts the same skips.
        expect(output.split(`All of them: ${installLine(missing)}.`)).toHaveLength(3);
        expect(output).toMatch(new RegExp(`Tests\\s+\\d+ passed \\| ${2 * missing.length} skipped`));
        expect(output).not.toMatch(/FAIL|Error/);
      },
      RUN_TIMEOUT_MS,
    );
  }

  it(
    'with CI=true and none of them: the run fails at once, naming each with its package',
    async () => {
      const { code, output } = await run([vitestCli, 'run', '--config', PROJECT], { PATH: await pathWithout(ALL), CI: 'true' });
      expect(code, output).toBe(1);
      for (const name of ALL) {
        expect(output).toContain(`${name} is not on PATH, and CI is set: ${FIXTURE} will fail (install: ${installLine([name])}).`);
      }
      expect(output).toContain(
        `Error: redis-server is not on PATH, and CI is set: these tests must run here (install: ${installLine(['redis-server'])}).`,
      );
      expect(output).toMatch(/Test Files\s+1 failed/);
      expect(output).not.toContain('tests skipped');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'finds chromium where CHROMIUM_PATH says, and says when it names no program',
    async () => {
      const cli = ['test/system-programs.ts', 'missing'];
      const elsewhere = await mkdtemp(join(folder, 'elsewhere-'));
      await mkdir(join(elsewhere, 'lib'));
      // Any program stands for chromium here: it is only looked for.
      await symlink(process.execPath, join(elsewhere, 'lib', 'chromium'));
      const noChromium = await pathWithout(['chromium']);
      const found = await run(cli, { PATH: noChromium, CHROMIUM_PATH: join(elsewhere, 'lib', 'chromium') });
      expect(found.output).not.toContain('chromium');
      const named = await run(cli, { PATH: `${noChromium}:${join(elsewhere, 'lib')}`, CHROMIUM_PATH: 'chromium' });
      expect(named.output).not.toContain('chromium');
      const wrong = await run(cli, { PATH: await pathWithout([]), CHROMIUM_PATH: '/nonexistent/chromium' });
      expect(wrong.output).toContain(
        'CHROMIUM_PATH=/nonexistent/chromium is not a program that can be run (Debian: apt-get install chromium)',
      );
      const bare = await run(cli, { PATH: noChromium });
      expect(bare.output).toContain('chromium is not on PATH (Debian: apt-get install chromium)');
    },
    RUN_TIMEOUT_MS,
  );
});

/** What a test file spawns through the helpers, besides the programs it names itself. */
const THROUGH: readonly [RegExp, readonly ProgramName[]][] = [
  [/^import (?!type\b)[^;]*from '(\.\.?\/)+redis\.js';/m, ['redis-server']],
  [/\bstartCluster\(/, ['redis-server', 'redis-cli']],
  [/\bstartSentinels\(/, ['redis-server']],
  [/\bmakeCertificates\(/, ['openssl']],
  [/from 'playwright-core'/, ['chromium']],
];

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).replaceAll('\\', '/'))
    .sort();
}

describe('every test file that spawns a program outside npm', () => {
  it('is listed with it in test/system-programs.ts, and its tests go through test/needs.ts', async () => {
    // This file names them all, and spawns only node.
    const files = (await testFiles('test')).filter((file) => file !== 'test/suite-skip.test.ts');
    const spawns = new Map<string, ProgramName[]>();
    for (const file of files) {
      const source = await readFile(join(root, file), 'utf8');
      const named = ALL.filter((name) => source.includes(`'${name}'`) || source.includes(`"${name}"`));
      const through = THROUGH.flatMap(([pattern, programs]) => (pattern.test(source) ? programs : []));
      const programs = ALL.filter((name) => named.includes(name) || through.includes(name));
      if (programs.length === 0) continue;
      spawns.set(file, programs);
      // Each goes through describeNeeding, itNeeding or pathIfPresent (test/redis.ts's describe is describeNeeding('redis-server')).
      const skipped = new Set<string>(
        through.includes('redis-server') && /\bdescribe\b[^;]*from '(\.\.?\/)+redis\.js'/.test(source) ? ['redis-server'] : [],
      );
      for (const call of source.matchAll(/\b(?:describeNeeding|itNeeding|pathIfPresent)\(([^)]*)\)/g)) {
        for (const quoted of (call[1] ?? '').matchAll(/'([^']+)'/g)) skipped.add(quoted[1] ?? '');
      }
      expect(
        programs.filter((name) => !skipped.has(name)),
        `${file}: spawned without describeNeeding, itNeeding or pathIfPresent`,
      ).toEqual([]);
    }
    const listed = new Map<string, ProgramName[]>();
    for (const program of SYSTEM_PROGRAMS) {
      for (const file of program.files) listed.set(file, [...(listed.get(file) ?? []), program.command]);
    }
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(spawns));
  });

  it('is in CONTRIBUTING.md with its package, and .ci/run installs them from the list', async () => {
    const contributing = await readFile(join(root, 'CONTRIBUTING.md'), 'utf8');
    expect(contributing).toContain(installLine(ALL));
    for (const { command, debianPackage } of SYSTEM_PROGRAMS)
      expect(contributing).toMatch(new RegExp(`\\| \`${command}\` +\\| \`${debianPackage}\` +\\|`));
    const ci = await readFile(join(root, '.ci/run'), 'utf8');
    expect(ci).toContain('test/system-programs.ts missing');
    expect(ci).not.toMatch(/\/usr\/s?bin\/(?!env )/);
  });
});
