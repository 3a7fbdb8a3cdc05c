// Every file a comment of src/ or bench/, or a page of the docs, names is there: a file moved or
// renamed takes its mentions with it. A name is looked for beside the text that names it, under the
// project's root, under src/ and under docs/; what is not the project's (a package's own files, what
// a build writes, an address) is not a name of ours.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function filesUnder(folder: string, ending: RegExp): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && ending.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** A path to a file of the kinds the project keeps, as prose writes it: `cache/keys.ts`, `docs/caching.md`. */
const NAMED = /(?<![\w/.@:*$-])((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|md|graphql|sh|mjs))(?![\w/-])/g;

/**
 * Names that are not files of ours: what a build writes, a package's own files, and the files a reader
 * writes by following a page (a router's configuration, a benchmark's report).
 */
const NOT_OURS =
  /^(?:dist|dist-bench|node_modules|lib|packages)\/|^(?:gateway\.config\.ts|BENCHMARKS\.md|bench\.md|file\.md|supergraph\.graphql)$/;

/** The names a text gives outside addresses (http…), each with its line. */
function namesIn(text: string): { name: string; line: number }[] {
  const found: { name: string; line: number }[] = [];
  text.split('\n').forEach((line, i) => {
    const withoutAddresses = line.replace(/\b(?:https?|file):\/\/\S+/g, ' ');
    for (const match of withoutAddresses.matchAll(NAMED)) found.push({ name: match[1] as string, line: i + 1 });
  });
  return found;
}

/** The comment lines of a TypeScript file (`//`, and the lines of `/* … *\/` blocks). */
function commentsOf(source: string): string {
  return source
    .split('\n')
    .map((line) => {
      const trimmed = line.trim();
      if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) return trimmed;
      const at = line.indexOf(' // ');
      return at === -1 ? '' : line.slice(at);
    })
    .join('\n');
}

/** Every file of the project (its own folders, no installed package or build), by its path from the root. */
const PROJECT = [
  ...readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name),
  ...['src', 'bench', 'test', 'docs', 'examples', 'deploy', '.ci'].flatMap((folder) =>
    filesUnder(folder, /./).filter((file) => !file.includes('node_modules/') && !file.includes('/dist/')),
  ),
];

/**
 * Whether `name`, written in `file`, is a file of the project: beside the text, from the root, or, as
 * prose names a module by its folder and name (`cache/keys.ts`) or its name alone, the end of one's path.
 */
function exists(name: string, file: string): boolean {
  if ([dirname(file), '.'].some((place) => existsSync(join(ROOT, place, name)))) return true;
  return PROJECT.some((path) => path === name || path.endsWith(`/${name}`));
}

function missingIn(files: readonly string[], read: (text: string) => string): string[] {
  return files.flatMap((file) =>
    namesIn(read(readFileSync(join(ROOT, file), 'utf8')))
      .filter(({ name }) => !NOT_OURS.test(name) && !exists(name, file))
      .map(({ name, line }) => `${file}:${line}: ${name}`),
  );
}

describe('files named in comments and docs', () => {
  it('every file a comment of src/ or bench/ names exists', () => {
    const sources = [...filesUnder('src', /\.ts$/), ...filesUnder('bench', /\.ts$/)];
    expect(missingIn(sources, commentsOf)).toEqual([]);
  });

  it('every file a page of the docs names exists', () => {
    const pages = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...filesUnder('docs', /\.md$/)].filter(
      (page) => page !== 'docs/CONTRACT.md',
    );
    // The changelog tells of files as they were: only its newest section must name files that are there.
    const read = (text: string): string =>
      text.includes('## Unreleased') ? text.slice(0, text.indexOf('\n## ', text.indexOf('## Unreleased') + 5)) : text;
    expect(missingIn(pages, read)).toEqual([]);
  });

  it('sees a missing file: the check can fail', () => {
    expect(missingIn(['src/gateway.ts'], () => '// see http/answer-cache.ts')).toEqual(['src/gateway.ts:1: http/answer-cache.ts']);
    expect(missingIn(['src/gateway.ts'], () => '// see http/answer.ts')).toEqual([]);
  });
});
