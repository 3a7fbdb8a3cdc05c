// vitest's describe and it for tests that spawn a program outside npm (test/system-programs.ts lists
// them, and the files that need each). On a machine without one of them, outside CI, the tests are
// skipped (and so are their hooks), and the run says so (test/suite-skip.ts); in CI the file fails as
// it loads, with one error naming what is missing and its Debian package.
import { describe, it } from 'vitest';
import { type ProgramName, inCi, installLine, programPath, whyMissing } from './system-programs.js';

function missingOf(programs: readonly ProgramName[]): ProgramName[] {
  const missing = programs.filter((name) => programPath(name) === null);
  if (missing.length > 0 && inCi) {
    throw new Error(`${missing.map(whyMissing).join('; ')}, and CI is set: these tests must run here (install: ${installLine(missing)}).`);
  }
  return missing;
}

/** vitest's describe, skipped outside CI when one of the programs is missing. */
export function describeNeeding(...programs: ProgramName[]): ReturnType<typeof describe.skipIf> {
  return describe.skipIf(missingOf(programs).length > 0);
}

/** vitest's it, skipped outside CI when one of the programs is missing. */
export function itNeeding(...programs: ProgramName[]): ReturnType<typeof it.skipIf> {
  return it.skipIf(missingOf(programs).length > 0);
}

/**
 * The program's path, or null outside CI when it is missing: for a test that does less without it (the
 * stored pass measures no gateway on Redis). In CI a missing one fails the file as it loads.
 */
export function pathIfPresent(name: ProgramName): string | null {
  missingOf([name]);
  return programPath(name);
}

/** The program's path; in a test that needs it (it is there: its test was not skipped). */
export function pathOf(name: ProgramName): string {
  const path = programPath(name);
  if (path === null) throw new Error(`${whyMissing(name)} (install: ${installLine([name])})`);
  return path;
}
