// scripts/build-when-changed.mjs, which `npm start` runs first: it builds when a source is newer than the
// last build, and not otherwise. Run on a tiny copy of the layout (src/, the two tsconfig files and the
// repository's node_modules), so that its builds take a second and the repository's dist/ is untouched.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../docs.js';

const run = promisify(execFile);
const copy = mkdtempSync(join(tmpdir(), 'build-when-changed-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

mkdirSync(join(copy, 'scripts'));
mkdirSync(join(copy, 'src'));
cpSync(join(ROOT, 'scripts', 'build-when-changed.mjs'), join(copy, 'scripts', 'build-when-changed.mjs'));
symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
writeFileSync(
  join(copy, 'tsconfig.json'),
  JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2024', types: [] } }),
);
writeFileSync(
  join(copy, 'tsconfig.build.json'),
  JSON.stringify({
    extends: './tsconfig.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist', incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo' },
    include: ['src'],
  }),
);
const source = join(copy, 'src', 'main.ts');
const built = join(copy, 'dist', 'main.js');
const stamp = join(copy, 'dist', '.tsbuildinfo');
const buildWhenChanged = () => run(process.execPath, [join(copy, 'scripts', 'build-when-changed.mjs')], { cwd: copy });

describe('npm start builds when a source changed, and only then', () => {
  it('builds a tree never built, then leaves an unchanged tree alone', async () => {
    writeFileSync(source, 'export const answer: number = 1;\n');
    await buildWhenChanged();
    expect(existsSync(built)).toBe(true);
    // Both set back an hour: "unchanged" is the build being the newer one.
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(source, hourAgo, hourAgo);
    const builtAt = statSync(stamp).mtimeMs;
    rmSync(built);
    await buildWhenChanged();
    expect(existsSync(built)).toBe(false);
    expect(statSync(stamp).mtimeMs).toBe(builtAt);
  });

  it('builds again once a source is newer than the last build, and stops on a type error', async () => {
    writeFileSync(source, 'export const answer: number = 2;\n');
    await buildWhenChanged();
    expect(existsSync(built)).toBe(true);
    writeFileSync(source, "export const answer: number = 'two';\n");
    const failed = await buildWhenChanged().catch((error: { code: number; stdout: string }) => error);
    expect(failed).toMatchObject({ code: 2, stdout: expect.stringContaining("Type 'string' is not assignable to type 'number'") });
    // A failed build is not a build: the next start tries again, and stops again.
    const again = await buildWhenChanged().catch((error: { code: number; stdout: string }) => error);
    expect(again).toMatchObject({ code: 2, stdout: expect.stringContaining("Type 'string' is not assignable to type 'number'") });
  });
});
