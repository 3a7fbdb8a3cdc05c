// Whether the Redis suite runs, and the reporter that says so. The suite starts a real redis-server
// (test/redis.ts), a system package `npm ci` cannot install: on a machine without one, outside CI,
// the suite is skipped and the run says so when it starts and again under its summary; in CI (`CI`
// set, as CI services do) it is not skipped, and fails at once, naming what is missing. Read by
// test/redis.ts (the skip) and by vitest.config.ts (the reporter), in different processes: nothing
// here may import vitest's runtime.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node';

export const REDIS_SUITE = 'test/upstream/cache-store.redis.test.ts';
export const REDIS_INSTALL = 'apt-get install redis-server';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** As CI services set it (`CI=true`, `CI=1`); `CI=false` is not CI. */
export const inCi = (process.env.CI ?? '') !== '' && process.env.CI !== 'false' && process.env.CI !== '0';
/** redis-server cannot be spawned: it is in no directory of PATH. */
export const redisServerMissing = !onPath('redis-server');
/** The Redis suite is skipped: redis-server is missing and this is not CI. */
export const skipRedisSuite = redisServerMissing && !inCi;

/** Says, at the start and under the summary, that the Redis suite is skipped or will fail, and why. */
export default class RedisSuiteNotice implements Reporter {
  private vitest: Vitest | undefined;
  private suiteInRun = false;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.suiteInRun = specifications.some((specification) => isRedisSuite(specification.moduleId));
    if (!this.suiteInRun || !redisServerMissing) return;
    this.say(
      skipRedisSuite
        ? `Redis suite skipped: redis-server is not on PATH, so ${REDIS_SUITE} will not run (install it: ${REDIS_INSTALL}; with CI=true it fails instead).`
        : `Redis suite will fail: CI is set and redis-server is not on PATH (install it: ${REDIS_INSTALL}).`,
    );
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (!this.suiteInRun || !skipRedisSuite) return;
    const suite = testModules.find((module) => isRedisSuite(module.moduleId));
    const skipped = suite === undefined ? 0 : [...suite.children.allTests('skipped')].length;
    this.say(
      `Redis suite skipped: ${skipped} tests of ${REDIS_SUITE} did not run because redis-server is not on PATH (install it: ${REDIS_INSTALL}).`,
    );
  }

  private say(line: string): void {
    this.vitest?.logger.log(`\n ${line}`);
  }
}

function isRedisSuite(moduleId: string): boolean {
  return moduleId.replaceAll('\\', '/').endsWith(`/${REDIS_SUITE}`);
}
