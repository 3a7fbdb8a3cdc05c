// GraphQL Code Generator's client-preset over schema.graphql and the documents in ./documents: the
// generated code and a frontend's usage of it type-check under `strict` with Date and DateTime as
// strings, the persisted-documents.json it writes is a manifest the gateway runs by hash
// (PERSISTED_DOCUMENTS, TRUSTED_DOCUMENTS_ONLY), and the usage file's urql client does so for real.
// Everything is generated into a temporary directory, never into the repository.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generate, type CodegenConfig } from '@graphql-codegen/cli';
import type { Client, OperationResult } from '@urql/core';
import { buildSchema, Kind, parse, type GraphQLScalarType, type OperationDefinitionNode } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KEY_1, dataOf, errorsOf, postGraphQL, present, restCalls, startStack, type Stack } from '../fixture.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The codegen configuration docs/clients.md shows (output directory aside). */
const codegenConfig = (outputDir: string, scalars: Record<string, string> | undefined): CodegenConfig => ({
  schema: join(root, 'schema.graphql'),
  documents: join(root, 'test/clients/documents/*.graphql'),
  generates: {
    [`${outputDir}/`]: {
      preset: 'client',
      presetConfig: { persistedDocuments: true },
      config: scalars === undefined ? {} : { scalars },
    },
  },
  silent: true,
});
const SCALARS = { Date: 'string', DateTime: 'string' };

// The code a frontend writes against the generated code: type-checked under strict, then run.
const USAGE = `
import { Client, cacheExchange, fetchExchange, type OperationResult } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import {
  DashboardDocument,
  DeleteWebsiteDocument,
  type DashboardQuery,
  type DashboardQueryVariables,
  type DeleteWebsiteMutation,
  type WebsiteListQuery,
  type WebsiteListQueryVariables,
} from './gql/graphql';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type Website = NonNullable<DashboardQuery['website']>;
// Date in (variables) and DateTime out (createdAt) are strings; without the mapping: unknown.
export type DateVariableIsString = Assert<Equal<DashboardQueryVariables['from'], string>>;
export type ListDateVariableIsString = Assert<Equal<WebsiteListQueryVariables['to'], string>>;
export type DateTimeFieldIsString = Assert<Equal<Website['createdAt'], string | null>>;
export type CountIsNumber = Assert<Equal<Website['visitors']['nodes'][number]['count'], number>>;
export type ListIsTyped = Assert<Equal<WebsiteListQuery['websites']['nodes'][number]['favorite'], boolean | null>>;

// @ts-expect-error a Date variable is a string, not a Date object
export const wrongDate: DashboardQueryVariables = { id: '1', from: new Date(), to: '2026-03-15' };

/** The manifest hash a generated document carries in __meta__.hash, without its "sha256:" prefix. */
export function persistedHash(document: object): string | null {
  const meta: unknown = '__meta__' in document ? document.__meta__ : undefined;
  if (typeof meta !== 'object' || meta === null || !('hash' in meta) || typeof meta.hash !== 'string') return null;
  return meta.hash.replace(/^sha256:/, '');
}

/** urql for a gateway that runs only trusted documents: every operation by its hash, never the document. */
export function createClient(url: string, authorization: string): Client {
  return new Client({
    url,
    fetchOptions: { headers: { authorization } },
    exchanges: [
      cacheExchange,
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        generateHash: async (_query, document) => persistedHash(document),
      }),
      fetchExchange,
    ],
  });
}

export async function loadDashboard(client: Client, id: string): Promise<OperationResult<DashboardQuery, DashboardQueryVariables>> {
  return client.query(DashboardDocument, { id, from: '2026-02-14', to: '2026-03-15' }, { requestPolicy: 'network-only' }).toPromise();
}

export async function deleteWebsite(client: Client, id: string): Promise<DeleteWebsiteMutation['deleteWebsite'] | null> {
  const result = await client.mutation(DeleteWebsiteDocument, { id }).toPromise();
  return result.data?.deleteWebsite ?? null;
}
`;

/** What the test uses of the usage file once it is loaded (its own types are checked by tsc). */
interface Usage {
  persistedHash(document: object): string | null;
  createClient(url: string, authorization: string): Client;
  loadDashboard(client: Client, id: string): Promise<OperationResult<DashboardResult>>;
  deleteWebsite(client: Client, id: string): Promise<DeletePayload | null>;
}
interface DashboardResult {
  website: { id: string; domain: string; createdAt: string | null; visitors: { nodes: { value: string; count: number }[] } } | null;
}
interface DeletePayload {
  deletedId: string | null;
  userErrors: unknown[];
  query: { websites: { totalCount: number; nodes: { id: string; domain: string }[] } };
}

let dir: string;
let gqlDir: string;
let manifestPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-codegen-'));
  gqlDir = join(dir, 'gql');
  manifestPath = join(gqlDir, 'persisted-documents.json');
  await generate(codegenConfig(gqlDir, SCALARS), true);
  await writeFile(join(dir, 'usage.ts'), USAGE);
  // The packages the generated code and the usage file import, as a frontend project would have them.
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2023', 'DOM'],
        types: [],
        skipLibCheck: true,
      },
      include: ['gql/**/*.ts', 'usage.ts'],
    }),
  );
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function readManifest(): Promise<Record<string, string>> {
  return JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, string>;
}
const operationName = (document: string): string => {
  const [operation] = parse(document).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operation?.name?.value ?? '';
};

describe('schema.graphql', () => {
  it('declares @specifiedBy on Date and DateTime', async () => {
    const printed = await readFile(join(root, 'schema.graphql'), 'utf8');
    expect(printed).toMatch(/^scalar Date @specifiedBy\(url: "https:\/\/[^"]+"\)$/m);
    expect(printed).toMatch(/^scalar DateTime @specifiedBy\(url: "https:\/\/[^"]+"\)$/m);
    const schema = buildSchema(printed);
    for (const name of ['Date', 'DateTime']) {
      expect((schema.getType(name) as GraphQLScalarType | undefined)?.specifiedByURL).toMatch(/^https:\/\//);
    }
  });
});

describe('client-preset (persistedDocuments, Date and DateTime as string)', () => {
  it('writes the preset files and a manifest of "sha256:<hex>" keys, each the SHA-256 of its document', async () => {
    expect((await readdir(gqlDir)).sort()).toEqual(['fragment-masking.ts', 'gql.ts', 'graphql.ts', 'index.ts', 'persisted-documents.json']);
    const manifest = await readManifest();
    expect(Object.values(manifest).map(operationName).sort()).toEqual(['Dashboard', 'DeleteWebsite', 'WebsiteList']);
    for (const [key, document] of Object.entries(manifest)) expect(key).toBe(`sha256:${sha256(document)}`);
  });

  it('generated documents carry the manifest key in __meta__.hash, "sha256:" included', async () => {
    const manifest = await readManifest();
    const generated = await readFile(join(gqlDir, 'graphql.ts'), 'utf8');
    const carried = [...generated.matchAll(/^export const (\w+)Document = \{"__meta__":\{"hash":"([^"]+)"\}/gm)].map(([, name, hash]) => [
      name,
      hash,
    ]);
    expect(carried.map(([name]) => name).sort()).toEqual(['Dashboard', 'DeleteWebsite', 'WebsiteList']);
    for (const [name, hash] of carried) expect(operationName(manifest[present(hash, 'hash')] ?? '')).toBe(name);
  });

  it('types Date and DateTime as string with the scalars mapping (unknown without it)', async () => {
    const generated = await readFile(join(gqlDir, 'graphql.ts'), 'utf8');
    expect(generated).toMatch(/\bfrom: string;/);
    expect(generated).toMatch(/\bcreatedAt: string \| null\b/);
    // No `unknown` left but the preset's own helpers (Exact's index signature, `as unknown as DocumentNode`).
    expect(generated.replaceAll('[key: string]: unknown', '').replaceAll('as unknown as', '')).not.toMatch(/\bunknown\b/);
    // generate() is typed `Promise<FileOutput[] | any>` (watch mode); not saved to disk this time.
    const outputs: { filename: string; content: string }[] = await generate(codegenConfig(join(dir, 'unmapped'), undefined), false);
    const [unmapped] = outputs.filter((file) => file.filename.endsWith('/graphql.ts'));
    const content = present(unmapped, 'graphql.ts without the mapping').content;
    expect(content).toMatch(/\bfrom: unknown;/);
    expect(content).toMatch(/\bcreatedAt: unknown\b/);
  });

  it('the generated code and a strict usage of it type-check (tsc -p, strict)', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch(
      (error: { stdout?: string }) => {
        throw new Error(`tsc found errors:\n${error.stdout ?? String(error)}`);
      },
    );
    expect(stdout).toBe('');
  }, 60_000);

  describe('against a gateway with PERSISTED_DOCUMENTS (the generated manifest) and TRUSTED_DOCUMENTS_ONLY=true', () => {
    let stack: Stack;
    let usage: Usage;
    beforeAll(async () => {
      stack = await startStack({ env: { PERSISTED_DOCUMENTS: manifestPath, TRUSTED_DOCUMENTS_ONLY: 'true' } });
      usage = (await import(pathToFileURL(join(dir, 'usage.ts')).href)) as Usage;
    });
    afterAll(() => stack.close());

    /** Records the requests made to the gateway through the global fetch (urql's default). */
    function recordRequests(): URLSearchParams[] {
      const sent: URLSearchParams[] = [];
      const realFetch = globalThis.fetch;
      vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
        const request = new Request(input, init);
        if (request.url.startsWith(stack.endpoint)) {
          const url = new URL(request.url);
          if (request.method === 'POST' && typeof init?.body === 'string') {
            for (const [name, value] of Object.entries(JSON.parse(init.body) as Record<string, unknown>)) {
              url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
            }
          }
          url.searchParams.set('method', request.method);
          sent.push(url.searchParams);
        }
        return realFetch(input, init);
      });
      return sent;
    }

    it('urql runs the generated Dashboard by its hash alone (GET), typed as generated', async () => {
      stack.sandbox.log.reset();
      const sent = recordRequests();
      const result = await usage.loadDashboard(usage.createClient(stack.endpoint, `Bearer ${KEY_1}`), '1');
      expect(result.error).toBeUndefined();
      const website = present(result.data?.website, 'website');
      expect(website.domain).toBe('acme-analytics.com');
      expect(website.visitors.nodes).toHaveLength(30);
      expect(sent).toHaveLength(1);
      const [request] = sent;
      expect(request?.get('method')).toBe('GET');
      expect(request?.has('query')).toBe(false);
      const manifest = await readManifest();
      const hash = JSON.parse(present(request?.get('extensions'), 'extensions')) as { persistedQuery: { sha256Hash: string } };
      expect(operationName(manifest[`sha256:${hash.persistedQuery.sha256Hash}`] ?? '')).toBe('Dashboard');
      expect(restCalls(stack.sandbox)).toContain('GET /api/v1/websites/1');
    });

    it('urql runs the generated DeleteWebsite mutation by its hash (POST), its `query` answering the list after the write', async () => {
      const sent = recordRequests();
      const payload = present(await usage.deleteWebsite(usage.createClient(stack.endpoint, `Bearer ${KEY_1}`), '10'), 'payload');
      expect(payload.deletedId).toBe('10');
      expect(payload.userErrors).toEqual([]);
      expect(payload.query.websites.totalCount).toBe(6);
      expect(payload.query.websites.nodes.map((node) => node.id)).not.toContain('10');
      expect(sent.map((params) => [params.get('method'), params.has('query')])).toEqual([['POST', false]]);
    });

    it('fetch runs the generated WebsiteList by the hash its __meta__ carries, and anything else is refused with nothing upstream', async () => {
      const manifest = await readManifest();
      const [key] = Object.entries(manifest).find(([, document]) => operationName(document) === 'WebsiteList') ?? [];
      const hash = present(key, 'WebsiteList key').replace(/^sha256:/, '');
      const list = await postGraphQL<{ websites: { totalCount: number; nodes: { visitors: { nodes: unknown[] } }[] } }>(
        stack.endpoint,
        { variables: { from: '2026-03-01', to: '2026-03-15' }, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } },
        { authorization: `Bearer ${KEY_1}` },
      );
      const websites = dataOf(list).websites;
      expect(websites.nodes).toHaveLength(websites.totalCount);
      for (const node of websites.nodes) expect(node.visitors.nodes).toHaveLength(15);

      stack.sandbox.log.reset();
      const other = await postGraphQL(stack.endpoint, { query: '{ websites { totalCount } }' }, { authorization: `Bearer ${KEY_1}` });
      expect(other.data ?? null).toBeNull();
      expect(errorsOf(other).length).toBeGreaterThan(0);
      expect([200, 400]).toContain(other.status);
      expect(stack.sandbox.log.count).toBe(0);
    });
  });
});
