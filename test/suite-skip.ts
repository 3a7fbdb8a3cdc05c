// The reporter that says which tests a run skips for want of a program outside npm, and why: once when
// the run starts and once under its summary, each missing program with the files that need it and its
// Debian package, then one `apt-get install` line for them all (test/system-programs.ts has the list; in
// CI, where they fail instead, it says which will fail). Read by vitest.config.ts in vitest's main
// process: nothing here may import vitest's runtime.
import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node';
import { type ProgramName, SYSTEM_PROGRAMS, inCi, installLine, missingPrograms, whyMissing } from './system-programs.js';

interface Options {
  /** The files that need each program, from the root (default: test/system-programs.ts's). */
  files?: Partial<Record<ProgramName, readonly string[]>>;
}

interface Missing {
  name: ProgramName;
  /** The files of the run that need it. */
  files: string[];
}

export default class SystemProgramNotice implements Reporter {
  private vitest: Vitest | undefined;
  private inRun: Missing[] = [];

  constructor(private readonly options: Options = {}) {}

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.inRun = missingPrograms()
      .map((name) => ({
        name,
        files: this.filesOf(name).filter((file) => specifications.some((specification) => isFile(specification.moduleId, file))),
      }))
      .filter((missing) => missing.files.length > 0);
    if (this.inRun.length === 0) return;
    const lines = this.inRun.map(({ name, files }) =>
      inCi
        ? `${whyMissing(name)}, and CI is set: ${files.join(', ')} will fail (install: ${installLine([name])}).`
        : `${whyMissing(name)}: the tests of ${files.join(', ')} that need it are skipped (install: ${installLine([name])}).`,
    );
    this.say(lines, inCi ? '' : ' With CI=true they fail instead.');
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (inCi || this.inRun.length === 0) return;
    const lines = this.inRun.map(({ name, files }) => {
      const modules = testModules.filter((module) => files.some((file) => isFile(module.moduleId, file)));
      const skipped = modules.reduce((sum, module) => sum + [...module.children.allTests('skipped')].length, 0);
      return `${whyMissing(name)}: ${skipped} tests skipped, in ${files.join(', ')} (install: ${installLine([name])}).`;
    });
    this.say(lines, '');
  }

  private filesOf(name: ProgramName): readonly string[] {
    return this.options.files?.[name] ?? SYSTEM_PROGRAMS.find((program) => program.command === name)?.files ?? [];
  }

  private say(lines: string[], after: string): void {
    const all = installLine(this.inRun.map((missing) => missing.name));
    const text = [...lines.map((line) => ` ${line}`), ` All of them: ${all}.${after}`].join('\n');
    this.vitest?.logger.log(`\n${text}`);
  }
}

function isFile(moduleId: string, file: string): boolean {
  return moduleId.replaceAll('\\', '/').endsWith(`/${file}`);
}
