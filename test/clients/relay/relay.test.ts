// Relay against the gateway, as a Relay app uses it: the real relay-compiler compiles the small app in
// ./app (a list with @connection and @refetchable, a card with @refetchable on Website, a delete with
// @deleteRecord) with ./relay.config.json, in a temporary directory against the schema printed from the
// code; relay-runtime's Environment then runs the generated operations over real HTTP against the
// gateway and the sandbox, doing what usePaginationFragment, useRefetchableFragment and useMutation do.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import relayRuntime, {
  type ConcreteRequest,
  type GraphQLTaggedNode,
  type MutationParameters,
  type ReaderFragment,
  type Variables,
} from 'relay-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedSchema } from '../../../src/schema/print.js';
import { CREATE_WEBSITE, KEY_1, UPDATE_WEBSITE, dataOf, present, startStack, type Stack, type WebsitePayloadData } from '../../fixture.js';

// relay-runtime is CommonJS whose named exports Node cannot all see: its default export holds them.
const { Environment, Network, RecordSource, Store, commitMutation, createOperationDescriptor, fetchQuery, getSelector } = relayRuntime;
type RelayEnvironment = InstanceType<typeof Environment>;

const fixture = fileURLToPath(new URL('.', import.meta.url));
const relayCompiler = createRequire(import.meta.url)('relay-compiler') as string | null;
const run = promisify(execFile);

/** relay-compiler over a project folder: its exit and what it printed. */
async function compile(project: string): Promise<{ ok: boolean; output: string }> {
  if (relayCompiler === null) throw new Error('relay-compiler has no binary for this platform');
  try {
    const { stdout, stderr } = await run(relayCompiler, [join(project, 'relay.config.json')], { cwd: project });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

/** The fixture app copied into `directory` with the schema printed from the code. */
async function project(directory: string): Promise<string> {
  await cp(fixture, directory, { recursive: true, filter: (source) => !source.endsWith('.test.ts') });
  await writeFile(join(directory, 'schema.graphql'), printedSchema());
  return directory;
}

let work: string;
let app: string;
let stack: Stack;

/** A generated artifact, by its operation or fragment name. */
async function artifact<T extends GraphQLTaggedNode>(name: string): Promise<T> {
  const module = (await import(pathToFileURL(join(app, 'app', '__generated__', `${name}.graphql.ts`)).href)) as { default: T };
  return module.default;
}

/** A Relay environment as an app makes one: a fetch to the gateway with the caller's key. */
function environment(): RelayEnvironment {
  const network = Network.create(async (operation, variables) => {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify({ query: operation.text, variables }),
    });
    return response.json();
  });
  return new Environment({ network, store: new Store(new RecordSource()) });
}

/** Runs a query into the store and keeps its data there (a mounted component retains it). */
async function load(env: RelayEnvironment, query: ConcreteRequest, variables: Variables) {
  await fetchQuery(env, query, variables).toPromise();
  const operation = createOperationDescriptor(query, variables);
  env.retain(operation);
  return env.lookup(operation.fragment).data;
}

/** A fragment's data as the component that spreads it reads it (useFragment). */
function read<T>(env: RelayEnvironment, fragment: ReaderFragment, ref: unknown): T {
  const selector = getSelector(fragment, ref);
  if (selector === null || selector.kind !== 'SingularReaderSelector') throw new Error(`no selector for ${fragment.name}`);
  return env.lookup(selector).data as T;
}

interface ListData {
  websitesConnection: {
    totalCount: number;
    edges: { node: { id: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}
interface CardData {
  id: string;
  domain: string;
  favorite: boolean | null;
  visitors: { totalCount: number };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'relay-app-'));
  app = await project(join(work, 'app-project'));
  stack = await startStack();
}, 60_000);
afterAll(async () => {
  await stack.close();
  await rm(work, { recursive: true, force: true });
});

describe('relay-compiler', () => {
  it('compiles the app against the schema: @refetchable on Website and on Query, @connection on websitesConnection, @deleteRecord', async () => {
    const { ok, output } = await compile(app);
    expect(output).toContain('Compilation completed');
    expect(ok).toBe(true);
  });

  it('refuses @connection on the offset list (websites), so the check above is a real one', async () => {
    const broken = await project(join(work, 'broken-project'));
    await writeFile(
      join(broken, 'app', 'OffsetList.ts'),
      'import { graphql } from \'relay-runtime\';\nexport const q = graphql`fragment OffsetList_query on Query { websites @connection(key: "OffsetList_websites") { totalCount } }`;\n',
    );
    const { ok, output } = await compile(broken);
    expect(ok).toBe(false);
    expect(output).toContain("Expected field 'websites' to be passed a 'first' or 'last' argument");
  });
});

describe('relay-runtime over HTTP', () => {
  it("loads more with the pagination query (usePaginationFragment's loadNext): every website once, in order, in one connection", async () => {
    const env = environment();
    const query = await artifact<ConcreteRequest>('WebsiteListQuery');
    const pagination = await artifact<ConcreteRequest>('WebsiteListPaginationQuery');
    const list = await artifact<ReaderFragment>('WebsiteList_query');
    const root = await load(env, query, { count: 3 });
    let data = read<ListData>(env, list, root);
    expect(data.websitesConnection.edges).toHaveLength(3);
    const loads: number[] = [];
    while (data.websitesConnection.pageInfo.hasNextPage) {
      stack.sandbox.log.reset();
      await fetchQuery(env, pagination, { count: 3, cursor: data.websitesConnection.pageInfo.endCursor }).toPromise();
      loads.push(stack.sandbox.log.count);
      data = read<ListData>(env, list, root);
    }
    // Relay's connection handler appended each page to the same connection record.
    expect(data.websitesConnection.edges.map((edge) => edge.node.id)).toEqual(['10', '8', '7', '5', '4', '2', '1']);
    expect(data.websitesConnection.totalCount).toBe(7);
    // Each page: the list page and each card's statistic.
    expect(loads).toEqual([4, 2]);
  });

  it("refetches one website by its id (useRefetchableFragment's refetch): the card reads what changed since", async () => {
    const env = environment();
    const created = dataOf(
      await stack.gql<{ createWebsite: WebsitePayloadData }>(CREATE_WEBSITE, { input: { domain: 'relay-card.example' } }),
    );
    const id = present(created.createWebsite.website, 'created website').id;
    const refetch = await artifact<ConcreteRequest>('WebsiteCardRefetchQuery');
    const card = await artifact<ReaderFragment>('WebsiteCard_website');
    const before = (await load(env, refetch, { id })) as { node: unknown };
    expect(read<CardData>(env, card, before.node)).toMatchObject({ id, domain: 'relay-card.example', favorite: false });

    dataOf(await stack.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, { id, input: { favorite: true } }));
    const after = (await load(env, refetch, { id })) as { node: unknown };
    expect(read<CardData>(env, card, after.node)).toMatchObject({ id, favorite: true, visitors: { totalCount: 0 } });
  });

  it('deletes a website with @deleteRecord: the record leaves the store, and node(id:) of it is null', async () => {
    const env = environment();
    const created = dataOf(
      await stack.gql<{ createWebsite: WebsitePayloadData }>(CREATE_WEBSITE, { input: { domain: 'relay-delete.example' } }),
    );
    const id = present(created.createWebsite.website, 'created website').id;
    const refetch = await artifact<ConcreteRequest>('WebsiteCardRefetchQuery');
    await load(env, refetch, { id });
    expect(env.getStore().getSource().get(id)).toBeTruthy();

    const mutation = await artifact<ConcreteRequest>('DeleteWebsiteMutation');
    const response = await new Promise<MutationParameters['response']>((resolve, reject) => {
      commitMutation(env, { mutation, variables: { id }, onCompleted: resolve, onError: reject });
    });
    expect(response).toEqual({ deleteWebsite: { deletedId: id, userErrors: [] } });
    expect(env.getStore().getSource().get(id)).toBeNull();

    const again = (await load(env, refetch, { id })) as { node: unknown };
    expect(again.node).toBeNull();
  });
});
