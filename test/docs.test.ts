// The docs are tested as code is. Every GraphQL example of README.md and docs/ runs as written against
// the sandbox, as a user pasting it into GraphiQL would: every operation of every block, in the docs'
// order and in reverse, each order twice on one sandbox, the id a create answered given to the
// operations that take `$id`. No example may depend on another having run or not: the queries answer
// data every time, the writes act only on websites the examples created, and the demo websites end as
// they began. The configuration page lists exactly the variables the code reads, with the code's
// defaults; the errors page exactly the codes of src/errors.ts; every relative link resolves.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, print, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { declaredSettings, loadConfig } from '../src/config.js';
import { EXAMPLE_QUERY } from '../src/graphql/plugins/use-graphiql-page.js';
import { optionsFromEnv } from '../src/sandbox/env-options.js';
import {
  anchorsOf,
  fencesOf,
  gatewayReads,
  graphqlBlocks,
  linksOf,
  MARKDOWN_FILES,
  readDoc,
  resolveFrom,
  ROOT,
  sourcesUnder,
  tableRows,
  type Fence,
} from './docs.js';
import { KEY_1, dataOf, postGraphQL, startStack, type Stack, type UserErrorData } from './fixture.js';
import { openSubscription } from './live/sse.js';

interface Example {
  block: Fence;
  operation: OperationDefinitionNode;
  name: string;
}
const examples: Example[] = graphqlBlocks().flatMap((block) =>
  parse(block.text)
    .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((operation, i) => ({ block, operation, name: `${block.file}: ${operation.name?.value ?? `anonymous ${i}`}` })),
);

/** How many counts, totals and sums above zero a response holds, at any depth. */
function figuresOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + figuresOf(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [name, field]) =>
      sum +
      (['count', 'total', 'totalCount', 'sum', 'visitors', 'pageviews'].includes(name) && typeof field === 'number' && field > 0
        ? 1
        : figuresOf(field)),
    0,
  );
}

interface Payload {
  website?: { id: string } | null;
  deletedId?: string | null;
  userErrors?: UserErrorData[];
}

/** What the user knows between operations: the id the latest create answered, and what was written. */
interface Session {
  createdId: string | undefined;
  deletedIds: Set<string>;
  /** Domains as the examples write them, of the creates that succeeded. */
  createdDomains: Set<string>;
}

/** The domain an operation creates, as written in it. */
function domainOf(example: Example): string | undefined {
  const { loc } = example.operation;
  return loc === undefined ? undefined : /domain: "([^"]+)"/.exec(example.block.text.slice(loc.start, loc.end))?.[1];
}

/** The userErrors a write may answer in a run of the examples, each caused by an earlier example's write. */
function expectedUserError(error: UserErrorData, id: string | undefined, session: Session, example: Example): boolean {
  // A create run again while its website exists (queries.md says so).
  if (error.code === 'BAD_USER_INPUT' && error.message === 'The domain has already been taken.') {
    const domain = domainOf(example);
    return domain !== undefined && session.createdDomains.has(domain);
  }
  // Favorite or Delete given the id of a website Delete already removed.
  return error.code === 'NOT_FOUND' && id !== undefined && session.deletedIds.has(id);
}

async function runExample(stack: Stack, example: Example, session: Session): Promise<void> {
  const { block, operation, name } = example;
  const query = block.text;
  const takesId = (operation.variableDefinitions ?? []).map((definition) => definition.variable.name.value);
  expect(
    takesId.filter((variable) => variable !== 'id'),
    `${name}: variables the docs do not explain`,
  ).toEqual([]);
  const id = takesId.includes('id') ? session.createdId : undefined;
  const body = { query, operationName: operation.name?.value, variables: id === undefined ? {} : { id } };

  if (operation.operation === 'subscription') {
    // As GraphiQL runs it: an event stream whose first event is the result, with data.
    const stream = await openSubscription<unknown>(stack.endpoint, body, KEY_1);
    try {
      expect(stream.response.status, name).toBe(200);
      const first = await stream.next();
      expect(first?.errors, name).toBeUndefined();
      expect(figuresOf(first?.data), name).toBeGreaterThan(0);
    } finally {
      stream.close();
    }
    return;
  }

  if (query.includes('@defer') || query.includes('@stream')) {
    // Incremental delivery: read the whole multipart answer; no part may carry an error.
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, name).toBe(200);
    expect(text, name).toContain('"hasNext":false');
    expect(text, name).not.toContain('"errors"');
    return;
  }

  const response = await postGraphQL<Record<string, Payload>>(stack.endpoint, body, { authorization: `Bearer ${KEY_1}` });
  if (takesId.includes('id') && id === undefined) {
    // Nothing created yet, so no id to give: the user is told which variable is missing.
    expect(response.errors?.[0]?.message, name).toMatch(/Variable "\$id" of required type "ID!" was not provided/);
    return;
  }
  const data = dataOf(response);
  if (operation.operation === 'query') {
    // A query must return data, not only no errors: some figure above zero somewhere in it.
    expect(figuresOf(data), name).toBeGreaterThan(0);
    return;
  }
  for (const [field, payload] of Object.entries(data)) {
    const unexpected = (payload.userErrors ?? []).filter((error) => !expectedUserError(error, id, session, example));
    expect(unexpected, `${name}: ${field}`).toEqual([]);
    if (field === 'createWebsite' && payload.website) {
      session.createdId = payload.website.id;
      session.createdDomains.add(domainOf(example) ?? '');
    }
    if (typeof payload.deletedId === 'string') session.deletedIds.add(payload.deletedId);
  }
}

type WebsiteFields = { id: string } & Record<string, unknown>;

/** KEY_1's websites with every field the examples can change. */
async function websitesOfKey1(stack: Stack): Promise<WebsiteFields[]> {
  const query = '{ websites(perPage: 100) { nodes { id domain privacy favorite excludeIps excludeParams emailReports excludeBots } } }';
  const response = await postGraphQL<{ websites: { nodes: WebsiteFields[] } }>(
    stack.endpoint,
    { query },
    { authorization: `Bearer ${KEY_1}` },
  );
  return dataOf(response).websites.nodes;
}

describe('the GraphQL examples of README.md and docs/', () => {
  it('are there: the dashboard, lists, load more, analytics, writes and a subscription', () => {
    const kinds = new Set(examples.map((example) => example.operation.operation));
    expect([...kinds].sort()).toEqual(['mutation', 'query', 'subscription']);
    expect(examples.filter((example) => example.operation.operation === 'mutation').length).toBeGreaterThanOrEqual(3);
    const queries = readDoc('docs/queries.md');
    for (const field of ['websites(', 'websitesConnection(', 'series(', 'summary(', 'createWebsite(', 'deleteWebsite(']) {
      expect(
        graphqlBlocks(['docs/queries.md']).some((block) => block.text.includes(field)),
        field,
      ).toBe(true);
    }
    expect(queries).toContain('query Dashboard');
  });

  it.each([
    ["in the docs' order", examples],
    ['in reverse', [...examples].reverse()],
  ])('run %s, twice, on one sandbox: every one answers, and the demo websites are untouched', async (_order, ordered) => {
    const stack = await startStack();
    try {
      const demo = await websitesOfKey1(stack);
      const demoIds = new Set(demo.map((website) => website.id));
      const session: Session = { createdId: undefined, deletedIds: new Set(), createdDomains: new Set() };
      for (let round = 1; round <= 2; round++) {
        for (const example of ordered) await runExample(stack, example, session);
      }
      expect(session.createdId, 'a create answered an id').toBeDefined();
      // Every write went to a website an example created (or to the collection), none to a demo website.
      const writes = stack.sandbox.log.entries.filter((entry) => entry.method !== 'GET');
      expect(writes.length).toBeGreaterThan(0);
      for (const write of writes) expect(demoIds, `${write.method} ${write.path}`).not.toContain(write.path.split('/')[4]);
      const after = await websitesOfKey1(stack);
      expect(after.filter((website) => demoIds.has(website.id))).toEqual(demo);
    } finally {
      await stack.close();
    }
  });
});

describe('README.md, the front door', () => {
  const readme = readDoc('README.md');

  it('is short: at most 150 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });

  it('shows the query GraphiQL opens on, and a glimpse of its answer that the gateway gives', async () => {
    const [dashboard] = graphqlBlocks(['README.md']);
    expect(print(parse(dashboard?.text ?? ''))).toBe(print(parse(EXAMPLE_QUERY)));
    const glimpse = fencesOf('README.md').find((fence) => fence.lang === 'text' && fence.text.includes('"data"'))?.text ?? '';
    const stack = await startStack({ env: { CACHE: 'on' } });
    try {
      const response = await stack.gql<{ website: Record<string, unknown> }>(EXAMPLE_QUERY);
      const { id, domain, privacy } = dataOf(response).website;
      for (const [name, value] of Object.entries({ id, domain, privacy })) expect(glimpse).toContain(`"${name}": ${JSON.stringify(value)}`);
      // Each figure of `extensions` as the glimpse writes it: `"cost": { "requested": 26, "limit": 100 }`.
      const inline = (value: unknown): string =>
        typeof value === 'object' && value !== null
          ? `{ ${Object.entries(value)
              .map(([name, field]) => `"${name}": ${inline(field)}`)
              .join(', ')} }`
          : JSON.stringify(value);
      for (const [name, value] of Object.entries(response.extensions ?? {})) expect(glimpse).toContain(`"${name}": ${inline(value)}`);
      // "Run it again": the cache answers.
      expect((await stack.gql(EXAMPLE_QUERY)).extensions?.upstreamCalls).toBe(0);
      expect(readme).toContain('Run it again: `"upstreamCalls": 0`');
    } finally {
      await stack.close();
    }
  });
});

// --- the configuration page against the code ---------------------------------------------------

interface DocumentedVariable {
  name: string;
  /** The first `value` of the default cell, or null ("none"). */
  defaultValue: string | null;
}

/** The variables of a page's tables: the first cell of a row holds backticked names. */
function documentedVariables(markdown: string): DocumentedVariable[] {
  return tableRows(markdown).flatMap(([names = '', defaults = '']) => {
    const listed = [...names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] ?? '');
    const values = [...defaults.matchAll(/`([^`]*)`/g)].map((match) => match[1] ?? '');
    return listed.map((name, i) => ({ name, defaultValue: values[i] ?? values[0] ?? null }));
  });
}

describe('docs/configuration.md against the code', () => {
  const documented = documentedVariables(readDoc('docs/configuration.md'));
  const declared = declaredSettings();

  it('lists exactly the environment variables the gateway declares and reads, each once', () => {
    expect(gatewayReads.size).toBeGreaterThan(40);
    const names = documented.map((variable) => variable.name);
    expect(
      names.filter((name, i) => names.indexOf(name) !== i),
      'listed twice',
    ).toEqual([]);
    const declaredNames = declared.map((setting) => setting.variable);
    expect(
      declaredNames.filter((name, i) => declaredNames.indexOf(name) !== i),
      'declared twice',
    ).toEqual([]);
    expect([...new Set(names)].sort()).toEqual([...declaredNames].sort());
    // Nothing in src/ reads a variable it does not declare (a stray `process.env.X`).
    expect([...gatewayReads.keys()].sort()).toEqual([...declaredNames].sort());
  });

  it("shows each setting's declared default and unit", () => {
    const rows = new Map(
      tableRows(readDoc('docs/configuration.md')).flatMap(([names = '', , unit = '']) =>
        [...names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => [match[1] ?? '', unit.trim()] as const),
      ),
    );
    const wrong: string[] = [];
    for (const setting of declared) {
      const shown = documented.find((variable) => variable.name === setting.variable)?.defaultValue;
      if (shown !== setting.shown) wrong.push(`${setting.variable}: the page shows ${shown}, the code declares ${setting.shown}`);
      const unit = rows.get(setting.variable);
      if (unit !== setting.unit) wrong.push(`${setting.variable}: the page's unit is ${unit}, the code declares ${setting.unit}`);
    }
    expect(wrong).toEqual([]);
  });

  it("gives each variable the code's default: set to it, the gateway's configuration is the same as unset", () => {
    const unset = loadConfig({});
    const wrong: string[] = [];
    for (const { name, defaultValue } of documented) {
      if (defaultValue === null) {
        // "none": unset means off. A value must change something, or the variable is not what the page says.
        const set = (() => {
          try {
            return loadConfig({ [name]: name.endsWith('_URL') ? 'redis://127.0.0.1:6379' : '1' });
          } catch {
            return null; // refused: the variable is read and checked
          }
        })();
        if (set !== null && JSON.stringify(set) === JSON.stringify(unset)) wrong.push(`${name}: set, it changes nothing`);
        continue;
      }
      let config: unknown;
      try {
        config = loadConfig({ [name]: defaultValue });
      } catch (error) {
        wrong.push(`${name}=${defaultValue}: ${(error as Error).message}`);
        continue;
      }
      if (JSON.stringify(config) !== JSON.stringify(unset))
        wrong.push(`${name}: the page says ${defaultValue}, the code has another default`);
    }
    expect(wrong).toEqual([]);
  });

  it('is checked for real: a default the code does not have is found', () => {
    const unset = loadConfig({});
    expect(JSON.stringify(loadConfig({ PORT: '4001' }))).not.toBe(JSON.stringify(unset));
    expect(JSON.stringify(loadConfig({ CACHE_TTL_RECENT_S: '61' }))).not.toBe(JSON.stringify(unset));
  });
});

describe("docs/sandbox.md's environment against the sandbox", () => {
  const markdown = readDoc('docs/sandbox.md');
  const section = markdown.slice(markdown.indexOf('## Environment'), markdown.indexOf('\n## ', markdown.indexOf('## Environment') + 1));
  const documented = documentedVariables(section);

  it('lists exactly the SANDBOX_* variables `npm run sandbox` reads', () => {
    const read = new Set(
      readFileSync(join(ROOT, 'src/sandbox/env-options.ts'), 'utf8')
        .match(/'SANDBOX_[A-Z_]+'/g)
        ?.map((name) => name.slice(1, -1)),
    );
    expect(read.size).toBeGreaterThan(5);
    expect(documented.map((variable) => variable.name).sort()).toEqual([...read].sort());
  });

  it('gives the port and the host their defaults', () => {
    for (const name of ['SANDBOX_PORT', 'SANDBOX_HOST']) {
      const value = documented.find((variable) => variable.name === name)?.defaultValue ?? '';
      expect(optionsFromEnv({ [name]: value }), name).toEqual(optionsFromEnv({}));
    }
  });
});

// --- the errors page against the one list of codes ---------------------------------------------

/** src/errors.ts's list of codes where it exports one (an array, a Set, or an object keyed by code). */
async function oneListOfCodes(): Promise<string[] | null> {
  const errors = (await import('../src/errors.js')) as Record<string, unknown>;
  for (const value of Object.values(errors)) {
    const codes =
      Array.isArray(value) || value instanceof Set ? [...value] : typeof value === 'object' && value !== null ? Object.keys(value) : [];
    if (codes.includes('UNAUTHENTICATED') && codes.every((code) => typeof code === 'string' && /^[A-Z][A-Z_]+$/.test(code)))
      return codes as string[];
  }
  return null;
}

/** Where there is no list yet: the codes src/ writes (the ErrorCode type, `code: '…'`) and those the libraries give. */
async function codesOfTheCode(): Promise<string[]> {
  const written = new Set<string>();
  for (const file of sourcesUnder('src').filter((path) => !path.startsWith('src/sandbox/'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const declarations = [...text.matchAll(/(?:type ErrorCode\s*=|\bcode\??:)\s*((?:\|?\s*'[A-Z][A-Z_]+'\s*)+)/g)];
    for (const [, literals = ''] of declarations) for (const code of literals.match(/[A-Z][A-Z_]+/g) ?? []) written.add(code);
  }
  // yoga's own codes, as a client meets them.
  const stack = await startStack();
  try {
    const parseFailed = await stack.gql('{');
    const validationFailed = await stack.gql('{ noSuchField }');
    const mismatch = await postGraphQL(
      stack.endpoint,
      { query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } },
      { authorization: `Bearer ${KEY_1}` },
    );
    for (const response of [parseFailed, validationFailed, mismatch]) written.add(String(response.errors?.[0]?.extensions?.code));
  } finally {
    await stack.close();
  }
  return [...written];
}

describe('docs/errors.md against the code', () => {
  it('lists exactly the codes of the one list, each once', async () => {
    const listed = tableRows(readDoc('docs/errors.md')).map(([code = '']) => code.replace(/`/g, ''));
    expect(
      listed.filter((code, i) => listed.indexOf(code) !== i),
      'listed twice',
    ).toEqual([]);
    const codes = (await oneListOfCodes()) ?? (await codesOfTheCode());
    expect(codes.length).toBeGreaterThan(20);
    expect([...listed].sort()).toEqual([...new Set(codes)].sort());
  });
});

// --- links, lines, and what points at the docs ---------------------------------------------------

describe('the Markdown', () => {
  it('has every relative link resolve: to a file of the repository, and to a heading of it', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of MARKDOWN_FILES) {
      for (const { line, target } of linksOf(file)) {
        if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto
        checked++;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : resolveFrom(file, path);
        let exists = false;
        try {
          exists = statSync(join(ROOT, resolved)).isFile() || statSync(join(ROOT, resolved)).isDirectory();
        } catch {}
        if (!exists) broken.push(`${file}:${line}: ${target} (no ${resolved})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readDoc(resolved)).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });

  it("has every page of docs/ in the README's table", () => {
    const readme = readDoc('README.md');
    const pages = MARKDOWN_FILES.filter((file) => file.startsWith('docs/'));
    expect(pages.filter((page) => !readme.includes(`](${page})`))).toEqual([]);
  });

  it('keeps lines under 120 characters, tables aside', () => {
    const long = MARKDOWN_FILES.flatMap((file) =>
      readDoc(file)
        .split('\n')
        .map((line, index) => ({ line, index }))
        .filter(({ line }) => line.length >= 120 && !line.startsWith('|'))
        .map(({ line, index }) => `${file}:${index + 1} (${line.length})`),
    );
    expect(long).toEqual([]);
  });

  it('is named by code and schema descriptions as docs pages, never as README headings', () => {
    const files = [...sourcesUnder('src'), ...sourcesUnder('test'), ...sourcesUnder('bench'), 'schema.graphql'];
    const toReadme: string[] = [];
    const toMissing: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/README(?:\.md)?\s*(?:[:(,]\s*)?["“]?[A-Z][a-z]+/g)) toReadme.push(`${file}: ${match[0]}`);
      for (const match of text.matchAll(/BENCHMARKS\.md/g)) toMissing.push(`${file}: ${match[0]}`);
      for (const [, page = '', anchor] of text.matchAll(/\bdocs\/([a-z-]+\.md)(?:#([a-z0-9-]+))?/gi)) {
        const path = `docs/${page}`;
        if (!MARKDOWN_FILES.includes(path)) toMissing.push(`${file}: ${path}`);
        else if (anchor !== undefined && !anchorsOf(readDoc(path)).has(anchor)) toMissing.push(`${file}: ${path}#${anchor}`);
      }
    }
    expect(toReadme).toEqual([]);
    expect(toMissing).toEqual([]);
  });
});

describe('the versions the docs name', () => {
  const lockOf = (path: string): Record<string, { version?: string }> =>
    (JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { packages: Record<string, { version?: string }> }).packages;
  const root = lockOf('package-lock.json');
  const example = lockOf('examples/dashboard/package-lock.json');
  const major = (lock: Record<string, { version?: string }>, name: string): string =>
    lock[`node_modules/${name}`]?.version?.split('.')[0] ?? `${name} not in the lockfile`;
  // How a doc names a package with its major version, and the lockfile whose version it must be.
  const named: [RegExp, () => string][] = [
    [/Apollo Client (\d+)/g, () => major(root, '@apollo/client')],
    [/`@urql\/core` (\d+)/g, () => major(root, '@urql/core')],
    [/\burql (\d+) \(`@urql\/core`/g, () => major(example, 'urql')],
    [/relay-runtime (\d+)/g, () => major(root, 'relay-runtime')],
    [/\bVite (\d+)/g, () => major(example, 'vite')],
    [/\bReact (\d+)/g, () => major(example, 'react')],
    [/\bgraphql (\d+)\b/g, () => major(root, 'graphql')],
  ];

  it("are the lockfiles' (the root's, and the dashboard example's for its own packages)", () => {
    const found: string[] = [];
    const wrong: string[] = [];
    for (const file of [...MARKDOWN_FILES, 'examples/dashboard/README.md']) {
      const text = readDoc(file);
      for (const [pattern, expected] of named) {
        for (const match of text.matchAll(pattern)) {
          found.push(match[0]);
          if (match[1] !== expected()) wrong.push(`${file}: "${match[0]}", the lockfile has ${expected()}`);
        }
      }
    }
    expect(found.length).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });
});
