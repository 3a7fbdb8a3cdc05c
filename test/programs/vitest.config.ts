// A tiny vitest project for test/suite-skip.test.ts: one test file with tests that need each system
// program, and the reporter that says what was skipped, run in a child process on a PATH without them.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SYSTEM_PROGRAMS } from '../system-programs.js';

const FIXTURE = 'test/programs/needs.fixture.ts';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: [FIXTURE],
    reporters: [
      'default',
      ['./test/suite-skip.ts', { files: Object.fromEntries(SYSTEM_PROGRAMS.map((program) => [program.command, [FIXTURE]])) }],
    ],
  },
});
