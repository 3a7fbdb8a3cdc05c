// The programs outside npm that tests spawn, which test files need each, and where each is found: in
// a directory of PATH, or where its variable says (CHROMIUM_PATH). `npm ci` cannot install them; on a
// machine without one, outside CI, the tests that need it are skipped and the run says so
// (test/suite-skip.ts); in CI (`CI` set, as CI services do) they are not skipped, and fail at once,
// naming what is missing (test/needs.ts). CONTRIBUTING.md lists them; .ci/run installs them from here:
//
//   node test/system-programs.ts packages    the Debian packages of them all, on one line
//   node test/system-programs.ts missing     those of the missing programs (nothing: all there)
//
// Read by vitest's main process (the reporter), by the test files and by .ci/run with node alone: it
// imports nothing but node's own modules.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SystemProgram {
  /** The command the tests spawn. */
  readonly command: string;
  /** Debian's package that installs it. */
  readonly debianPackage: string;
  /** What the tests that need it show, in a few words. */
  readonly enables: string;
  /** The test files that need it (some only for a part of their tests, or to do all they do), from the repository's root. */
  readonly files: readonly string[];
  /** A variable naming it instead of PATH: an absolute path, or a command looked up in PATH. */
  readonly variable?: string;
}

const REDIS_FILES = [
  'test/bench/scale.test.ts',
  'test/bench/stored.test.ts',
  'test/cache/stored-answers.test.ts',
  'test/live/redis-share.test.ts',
  'test/live/replicas.test.ts',
  'test/cache/read-cache.redis.test.ts',
  'test/cache/redis-store.redis.test.ts',
  'test/cache/unsettled.redis.test.ts',
  'test/cache/redis-connection.auth.test.ts',
  'test/cache/redis-connection.tls.test.ts',
  'test/cache/redis-topologies.test.ts',
  'test/gateway.redis-connection.test.ts',
];

export const SYSTEM_PROGRAMS = [
  {
    command: 'redis-server',
    debianPackage: 'redis-server',
    enables: 'the Redis store, stored answers and live polls shared on a real Redis, Sentinel, the scale benchmark',
    files: REDIS_FILES,
  },
  {
    command: 'redis-cli',
    debianPackage: 'redis-tools',
    enables: 'a Redis Cluster (joined by redis-cli --cluster create), in the topology tests and the scale benchmark',
    files: [
      'test/bench/scale.test.ts',
      'test/cache/redis-connection.auth.test.ts',
      'test/cache/redis-connection.tls.test.ts',
      'test/cache/redis-topologies.test.ts',
    ],
  },
  {
    command: 'openssl',
    debianPackage: 'openssl',
    enables: "Redis over TLS (the test's own certificate authority)",
    files: ['test/cache/redis-connection.tls.test.ts'],
  },
  {
    command: 'haproxy',
    debianPackage: 'haproxy',
    enables: 'a rolling restart behind HAProxy, and `haproxy -c` on the configurations of compose.yaml and docs',
    files: ['test/deploy.test.ts', 'test/http/rolling-restart.test.ts'],
  },
  {
    command: 'prometheus',
    debianPackage: 'prometheus',
    enables: 'the metrics as a real Prometheus scrapes them',
    files: ['test/http/metrics-listener.test.ts'],
  },
  {
    command: 'chromium',
    debianPackage: 'chromium',
    enables: 'GraphiQL in a real browser (driven by playwright-core, which downloads no browser)',
    files: ['test/dashboard.browser.test.ts', 'test/graphiql.browser.test.ts'],
    variable: 'CHROMIUM_PATH',
  },
] as const satisfies readonly SystemProgram[];

export type ProgramName = (typeof SYSTEM_PROGRAMS)[number]['command'];

/** As CI services set it (`CI=true`, `CI=1`); `CI=false` is not CI. */
export const inCi = (process.env.CI ?? '') !== '' && process.env.CI !== 'false' && process.env.CI !== '0';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function inPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, command))) return join(dir, command);
  }
  return null;
}

export function programOf(name: ProgramName): SystemProgram {
  return SYSTEM_PROGRAMS.find((program) => program.command === name) as SystemProgram;
}

/** Where the program is (its variable's path, or the first in PATH), or null when it is not there. */
export function programPath(name: ProgramName): string | null {
  const { variable } = programOf(name);
  const named = variable === undefined ? '' : (process.env[variable] ?? '');
  if (named === '') return inPath(name);
  return named.includes('/') ? (executable(named) ? named : null) : inPath(named);
}

/** Why the program cannot be run, as "haproxy is not on PATH". */
export function whyMissing(name: ProgramName): string {
  const { variable } = programOf(name);
  const named = variable === undefined ? '' : (process.env[variable] ?? '');
  return named === '' ? `${name} is not on PATH` : `${variable}=${named} is not a program that can be run`;
}

/** `apt-get install` of the programs' packages, one line. */
export function installLine(names: readonly ProgramName[]): string {
  return `apt-get install ${[...new Set(names.map((name) => programOf(name).debianPackage))].join(' ')}`;
}

/** The programs that cannot be run on this machine, in the list's order. */
export function missingPrograms(): ProgramName[] {
  return SYSTEM_PROGRAMS.map((program) => program.command).filter((name) => programPath(name) === null);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2];
  if (what === 'packages') console.log(installLine(SYSTEM_PROGRAMS.map((program) => program.command)).slice('apt-get install '.length));
  else if (what === 'missing') {
    const missing = missingPrograms();
    for (const name of missing) console.error(`${whyMissing(name)} (Debian: ${installLine([name])})`);
    if (missing.length > 0) console.log(installLine(missing).slice('apt-get install '.length));
  } else {
    console.error('usage: node test/system-programs.ts packages|missing');
    process.exitCode = 2;
  }
}
