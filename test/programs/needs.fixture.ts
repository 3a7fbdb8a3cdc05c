// Two tests that need each system program, and one that needs none (see vitest.config.ts here).
import { expect, it } from 'vitest';
import { describeNeeding, pathOf } from '../needs.js';
import { SYSTEM_PROGRAMS } from '../system-programs.js';

for (const { command } of SYSTEM_PROGRAMS) {
  describeNeeding(command)(`a test that spawns ${command}`, () => {
    it('finds it', () => expect(pathOf(command)).toMatch(new RegExp(`${command}$`)));
    it('finds it again', () => expect(pathOf(command)).toBe(pathOf(command)));
  });
}

it('needs no program', () => expect(SYSTEM_PROGRAMS.length).toBeGreaterThan(0));
