// Whether the suites that need a system program run, and the reporter that says so. The Redis suite
// starts a real redis-server (test/redis.ts) and the browser suite a real chromium (test/browser.ts),
// system packages `npm ci` cannot install: on a machine without one, outside CI, its suite is skipped
// and the run says so when it starts and again under its summary; in CI (`CI` set, as CI services do)
// it is not skipped, and fails at once, naming what is missing. Read by the suites (the skip) and by
// vitest.config.ts (the reporter), in different processes: nothing here may import vitest's runtime.
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node';

export const REDIS_SUITE = 'test/upstream/cache-store.redis.test.ts';
export const REDIS_INSTALL = 'apt-get install redis-server';
export const BROWSER_SUITE = 'test/graphiql.browser.test.ts';
export const BROWSER_INSTALL = 'apt-get install chromium';
/** Debian's chromium, or the one CHROMIUM_PATH names. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, command)));
}

/** As CI services set it (`CI=true`, `CI=1`); `CI=false` is not CI. */
export const inCi = (process.env.CI ?? '') !== '' && process.env.CI !== 'false' && process.env.CI !== '0';
/** redis-server cannot be spawned: it is in no directory of PATH. */
export const redisServerMissing = !onPath('redis-server');
/** The Redis suite is skipped: redis-server is missing and this is not CI. */
export const skipRedisSuite = redisServerMissing && !inCi;
/** chromium cannot be started: no executable at CHROMIUM_PATH. */
export const chromiumMissing = !executable(CHROMIUM_PATH);
/** The browser suite is skipped: chromium is missing and this is not CI. */
export const skipBrowserSuite = chromiumMissing && !inCi;

// The dashboard example's suite: chromium, and the example's own packages (`npm ci --prefix examples/dashboard`,
// which .ci/run does; `npm run example` does it too).
export const DASHBOARD_SUITE = 'test/dashboard.browser.test.ts';
export const DASHBOARD_INSTALL = 'npm ci --prefix examples/dashboard';
/** The example's packages are not installed. */
export const dashboardMissing = !existsSync(new URL('../examples/dashboard/node_modules/vite/package.json', import.meta.url));
/** The dashboard suite is skipped: chromium or the example's packages are missing, and this is not CI. */
export const skipDashboardSuite = (chromiumMissing || dashboardMissing) && !inCi;

interface SystemSuite {
  name: string;
  file: string;
  install: string;
  missing: boolean;
  /** Why it cannot run, as "redis-server is not on PATH". */
  reason: string;
}

const SUITES: readonly SystemSuite[] = [
  { name: 'Redis', file: REDIS_SUITE, install: REDIS_INSTALL, missing: redisServerMissing, reason: 'redis-server is not on PATH' },
  {
    name: 'Browser',
    file: BROWSER_SUITE,
    install: BROWSER_INSTALL,
    missing: chromiumMissing,
    reason: `chromium is not at ${CHROMIUM_PATH}`,
  },
  {
    name: 'Dashboard',
    file: DASHBOARD_SUITE,
    install: chromiumMissing ? BROWSER_INSTALL : DASHBOARD_INSTALL,
    missing: chromiumMissing || dashboardMissing,
    reason: chromiumMissing ? `chromium is not at ${CHROMIUM_PATH}` : "the dashboard example's packages are not installed",
  },
];

/** Says, at the start and under the summary, that a suite is skipped or will fail, and why. */
export default class SystemSuiteNotice implements Reporter {
  private vitest: Vitest | undefined;
  private inRun: SystemSuite[] = [];

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.inRun = SUITES.filter(
      (suite) => suite.missing && specifications.some((specification) => isFile(specification.moduleId, suite.file)),
    );
    for (const suite of this.inRun) {
      this.say(
        inCi
          ? `${suite.name} suite will fail: CI is set and ${suite.reason} (install it: ${suite.install}).`
          : `${suite.name} suite skipped: ${suite.reason}, so ${suite.file} will not run (install it: ${suite.install}; with CI=true it fails instead).`,
      );
    }
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (inCi) return;
    for (const suite of this.inRun) {
      const module = testModules.find((candidate) => isFile(candidate.moduleId, suite.file));
      const skipped = module === undefined ? 0 : [...module.children.allTests('skipped')].length;
      this.say(
        `${suite.name} suite skipped: ${skipped} tests of ${suite.file} did not run because ${suite.reason} (install it: ${suite.install}).`,
      );
    }
  }

  private say(line: string): void {
    this.vitest?.logger.log(`\n ${line}`);
  }
}

function isFile(moduleId: string, file: string): boolean {
  return moduleId.replaceAll('\\', '/').endsWith(`/${file}`);
}
