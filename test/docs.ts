// The project's Markdown as the tests read it: README.md, CONTRIBUTING.md and docs/*.md, their fenced
// blocks, headings and links. The GraphQL examples of the docs are run by test/docs.test.ts and by the
// client and plugin suites that take their documents from here. Also the environment variables the
// gateway reads, which docs/configuration.md and the deployment files (test/deploy.test.ts) must match.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every Markdown file of the docs, as paths from the root: README.md, CONTRIBUTING.md, docs/*.md. */
export const MARKDOWN_FILES: readonly string[] = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

export interface Fence {
  file: string;
  /** The info string: `graphql`, `ts`, `sh`, ... */
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** The fenced code blocks of a Markdown text, in order. */
export function fencesOf(file: string, markdown = readDoc(file)): Fence[] {
  const fences: Fence[] = [];
  const lines = markdown.split('\n');
  let open: { lang: string; line: number; body: string[] } | undefined;
  lines.forEach((line, index) => {
    if (open === undefined) {
      const start = /^```(\S*)\s*$/.exec(line);
      if (start) open = { lang: start[1] ?? '', line: index + 1, body: [] };
    } else if (/^```\s*$/.test(line)) {
      fences.push({ file, lang: open.lang, text: `${open.body.join('\n')}\n`, line: open.line });
      open = undefined;
    } else {
      open.body.push(line);
    }
  });
  return fences;
}

/** The Markdown outside fenced blocks, line by line (a fenced line is blank here, so numbers hold). */
export function proseLines(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (/^```/.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
}

/** The GraphQL examples of the docs: every ```graphql block of `files`, in file order. */
export function graphqlBlocks(files: readonly string[] = MARKDOWN_FILES): Fence[] {
  return files.flatMap((file) => fencesOf(file)).filter((fence) => fence.lang === 'graphql');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings (a repeated heading gets -1, -2, ... as on GitHub). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The links of a Markdown file outside code (inline links `[text](target)`), absolute URLs included. */
export function linksOf(file: string): Link[] {
  return proseLines(readDoc(file)).flatMap((line, index) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => ({ file, line: index + 1, target: match[1] ?? '' })),
  );
}

/** The rows of the Markdown tables of a text: their cells, trimmed (the header and divider rows left out). */
export function tableRows(markdown: string): string[][] {
  const lines = proseLines(markdown);
  return lines
    .map((line, index) => ({ line, next: lines[index + 1] ?? '' }))
    .filter(({ line, next }) => line.startsWith('|') && !/^\|[\s:|-]+\|$/.test(line) && !/^\|[\s:|-]+\|$/.test(next))
    .map(({ line }) =>
      line
        .replace(/^\|/, '')
        .replace(/\|$/, '')
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** A path of the repository, as a link from `file` names it (relative to the file's folder). */
export function resolveFrom(file: string, target: string): string {
  return relative(ROOT, join(ROOT, file, '..', target));
}

// --- the environment variables the code reads (docs/configuration.md, the deployment files) ------

/** The TypeScript files under a folder, as paths from the root. */
export function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The environment variables a file reads: `env.NAME`, `env['NAME']`, and the settings it declares (`integer('NAME', …)`). */
function variablesReadIn(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const patterns = [
    /\benv\.([A-Z][A-Z0-9_]*)\b/g,
    /\benv\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g,
    /\b(?:integer|optionalInteger|seconds|decimalSeconds|flag|choice|onOff|text|custom)(?:<[^>]*>)?\(\s*'([A-Z][A-Z0-9_]*)'/g,
  ];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1] ?? ''));
}

/** Every variable the gateway reads, each with the files that read it (src/ without the sandbox). */
export const gatewayReads = new Map<string, string[]>();
for (const file of sourcesUnder('src').filter((path) => !path.startsWith('src/sandbox/'))) {
  for (const name of variablesReadIn(file)) gatewayReads.set(name, [...(gatewayReads.get(name) ?? []), file]);
}
