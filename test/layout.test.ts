// The layout of src/ kept as rules (docs/architecture.md#layers-and-layout): layers that depend one way, no import cycle (type-only
// imports included: a cycle of types is still two modules that cannot be understood apart), the upstream
// side and the sandbox on their own, and the product free of devDependencies and of the benchmark.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

interface Imports {
  /** Modules of the project, as paths from the root (`src/upstream/api.ts`). */
  local: string[];
  /** Packages and node built-ins, as written. */
  bare: string[];
}

/** What a file imports, `import type` and `export … from` included (TypeScript's own pre-processor). */
function importsOf(file: string): Imports {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  const local: string[] = [];
  const bare: string[] = [];
  for (const { fileName } of importedFiles) {
    if (fileName.startsWith('.')) local.push(relative(ROOT, resolve(ROOT, dirname(file), fileName)).replace(/\.js$/, '.ts'));
    else bare.push(fileName);
  }
  return { local, bare };
}

const sources = filesUnder(SRC);
const graph = new Map(sources.map((file) => [file, importsOf(file)]));

/** Every cycle among the project's modules (Tarjan's strongly connected components of two or more, or a self-import). */
function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, order.get(next) as number));
      }
    }
    if (low.get(node) !== order.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!order.has(node)) visit(node);
  return found;
}

/** The imports of files under `from` that reach a module matched by `forbidden`, as "file -> module". */
function crossings(from: string, forbidden: (module: string) => boolean): string[] {
  return [...graph]
    .filter(([file]) => file.startsWith(from))
    .flatMap(([file, { local }]) => local.filter(forbidden).map((module) => `${file} -> ${module}`));
}

const under =
  (...folders: string[]) =>
  (module: string) =>
    folders.some((folder) => module === folder || module.startsWith(`${folder}/`));

describe('src/ layout', () => {
  it('has no import cycle, type-only imports included', () => {
    const edges = new Map([...graph].map(([file, { local }]) => [file, local.filter((module) => graph.has(module))]));
    expect(cycles(edges)).toEqual([]);
  });

  it('imports only modules that exist', () => {
    const missing = [...graph].flatMap(([file, { local }]) =>
      local.filter((module) => !graph.has(module)).map((module) => `${file} -> ${module}`),
    );
    expect(missing).toEqual([]);
  });

  it('depends one way: http -> graphql -> schema -> upstream, with analytics, domain, errors, settings and the key below them all', () => {
    // config.ts gathers every module's settings: nothing below the composition root imports it.
    const top = ['src/main.ts', 'src/mcp-stdio.ts', 'src/gateway.ts', 'src/config.ts'];
    expect(crossings('src/http/', under(...top))).toEqual([]);
    expect(crossings('src/graphql/', under('src/http', ...top))).toEqual([]);
    expect(crossings('src/schema/', under('src/graphql', 'src/http', ...top))).toEqual([]);
    expect(crossings('src/upstream/', under('src/schema', 'src/graphql', 'src/http', ...top))).toEqual([]);
    // The cache is below the upstream side (what it reads of an error is src/errors.ts's), nothing above.
    expect(crossings('src/cache/', under('src/schema', 'src/graphql', 'src/http', ...top))).toEqual([]);
    // The MCP server is handed its way to run an operation: it never reaches the composition root.
    expect(crossings('src/mcp/', under(...top))).toEqual([]);
    for (const below of ['src/analytics/', 'src/domain.ts', 'src/errors.ts', 'src/settings.ts', 'src/api-key.ts', 'src/http-headers.ts']) {
      expect(crossings(below, under('src/upstream', 'src/cache', 'src/schema', 'src/graphql', 'src/http', ...top))).toEqual([]);
    }
    // The declarations' kit and the key's reading need nothing of the project.
    expect(crossings('src/settings.ts', () => true)).toEqual([]);
    expect(crossings('src/api-key.ts', () => true)).toEqual([]);
    expect(crossings('src/http-headers.ts', () => true)).toEqual([]);
    // Nothing of the cache lives outside its room: no store, key names or Redis connection elsewhere.
    const cacheLike = /\/(?:cache[\w-]*|[\w-]*-store|keys|redis-[\w-]+|answer-cache)\.ts$/;
    expect(sources.filter((file) => (file.startsWith('src/upstream/') || file.startsWith('src/http/')) && cacheLike.test(file))).toEqual(
      [],
    );
    // Only the cache's room and the live share (its own Redis channel) use ioredis.
    expect(
      [...graph].filter(([file, { bare }]) => bare.includes('ioredis') && !file.startsWith('src/cache/')).map(([file]) => file),
    ).toEqual(['src/live/redis-share.ts']);
    // The HTTP layer hands yoga the request's state; it builds on no yoga plugin, and loads no yoga.
    expect(crossings('src/http/', under('src/graphql/plugins', 'src/graphql/yoga.ts'))).toEqual([]);
  });

  it('has no circle between rooms: the cache imports nothing of the upstream side', () => {
    expect(crossings('src/cache/', under('src/upstream'))).toEqual([]);
  });

  it("makes the request's state of nothing above the cache: no upstream, no schema, no yoga", () => {
    expect(crossings('src/request-state.ts', under('src/upstream', 'src/schema', 'src/graphql', 'src/http', 'src/live'))).toEqual([]);
  });

  it('reads the settings without loading the schema: config.ts reaches neither the schema nor yoga', () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file)?.local ?? []) visit(next);
    };
    visit('src/config.ts');
    expect([...reached].filter(under('src/schema/index.ts', 'src/schema/builder.ts', 'src/graphql/yoga.ts'))).toEqual([]);
    expect(reached.has('src/graphql/endpoint-settings.ts')).toBe(true);
  });

  it('writes an answer in one place: no file outside src/http/ calls writeHead or setHeader', () => {
    const writing = /\.(?:writeHead|setHeader)\(/;
    const outside = sources.filter(
      (file) => !file.startsWith('src/http/') && !file.startsWith('src/sandbox/') && writing.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(outside).toEqual([]);
    // The check itself sees a write.
    expect(writing.test('res.writeHead(200, headers)')).toBe(true);
  });

  it('keeps the sandbox to itself: it imports nothing outside src/sandbox/', () => {
    expect(crossings('src/sandbox/', (module) => !module.startsWith('src/sandbox/'))).toEqual([]);
  });

  it('ships no benchmark and no devDependency: src/ imports neither bench/ nor a package outside dependencies', () => {
    const { dependencies = {} } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const packageOf = (name: string): string =>
      name
        .split('/')
        .slice(0, name.startsWith('@') ? 2 : 1)
        .join('/');
    const outside = [...graph].flatMap(([file, { bare }]) =>
      bare.filter((name) => !name.startsWith('node:') && !(packageOf(name) in dependencies)).map((name) => `${file} -> ${name}`),
    );
    expect(outside).toEqual([]);
    expect(crossings('src/', (module) => !module.startsWith('src/'))).toEqual([]);
  });
});

describe("docs/architecture.md's layout", () => {
  const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = architecture.slice(architecture.indexOf('## Layers and layout'));
  const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4));
  /** The entries the block names at the start of a line: `src/http/`, `src/main.ts`. */
  const named = new Set(block.split('\n').flatMap((line) => /^(src\/\S+)/.exec(line)?.[1] ?? []));

  it('names every top-level file and folder of src/ on a line of its own', () => {
    const entries = readdirSync(SRC, { withFileTypes: true }).map((entry) => `src/${entry.name}${entry.isDirectory() ? '/' : ''}`);
    expect(entries.filter((entry) => !named.has(entry))).toEqual([]);
    expect([...named].filter((entry) => entry !== 'src/' && !entries.includes(entry))).toEqual([]);
  });

  it("names every module of the gateway's layers in its folder's entry (the sandbox is described as a whole)", () => {
    const entryOf = (folder: string): string => {
      const start = block.indexOf(`\n${folder}`);
      const next = block.slice(start + 1).search(/\n\S/);
      return next === -1 ? block.slice(start) : block.slice(start, start + 1 + next);
    };
    const unnamed = sources
      .filter((file) => !file.startsWith('src/sandbox/') && file.split('/').length > 2)
      .filter((file) => {
        const folder = `${file.split('/').slice(0, 2).join('/')}/`;
        const name = file.split('/').slice(2).join('/');
        const base = name.replace(/^plugins\//, '');
        return !entryOf(folder).includes(base) && !(base.startsWith('use-') && entryOf(folder).includes('plugins/use-*.ts'));
      });
    expect(unnamed).toEqual([]);
  });
});
