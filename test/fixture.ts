// The one fixture of the suites: the sandbox and the gateway on ephemeral ports, spoken to over real
// HTTP, with a typed GraphQL helper. `useStack()` starts them for a file (beforeAll), clears the
// sandbox's request log before each test and closes both after the file.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { createGateway, type Gateway, type GatewayOptions } from '../src/gateway.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';

export const TODAY = '2026-03-15';
export const KEY_1 = 'sandbox-key-1';
export const KEY_2 = 'sandbox-key-2';

/** A GraphQL error as it arrives over HTTP. */
export interface GraphQLErrorJson {
  message: string;
  path?: (string | number)[];
  locations?: { line: number; column: number }[];
  extensions?: Record<string, unknown>;
}

/** `T` is the shape of `data` the caller expects: the helper types, it does not check. */
export interface GraphQLResponse<T> {
  status: number;
  headers: Headers;
  data?: T | null;
  errors?: GraphQLErrorJson[];
  extensions?: Record<string, unknown>;
}

export interface StackOptions {
  sandbox?: SandboxOptions;
  env?: Record<string, string>;
  gateway?: GatewayOptions;
}

export interface Stack {
  sandbox: Sandbox;
  gateway: Gateway;
  endpoint: string;
  /** POSTs an operation with `key` (KEY_1 by default; null: no Authorization header). */
  gql<T>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

/**
 * The suites count upstream calls request by request, so the read cache is off unless a test turns it
 * on (`CACHE: 'on'`): test/cache/read-cache.test.ts and the Redis suite do. Operations are compiled by
 * graphql-jit at their first run (a gateway compiles at the second by default), so that every suite
 * checks the compiled execution; test/graphql/plugins/use-compiled-execution.test.ts compares it with the standard one.
 */
export function testConfig(upstreamUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({ PORT: '0', UPSTREAM_URL: upstreamUrl, LOG_LEVEL: 'silent', CACHE: 'off', GRAPHQL_JIT_ON_RUN: '1', ...env });
}

export async function postGraphQL<T>(endpoint: string, body: unknown, headers: Record<string, string> = {}): Promise<GraphQLResponse<T>> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Omit<GraphQLResponse<T>, 'status' | 'headers'>;
  return { status: response.status, headers: response.headers, ...json };
}

/**
 * A clock whose day is `today` (from noon, running on), as the sandbox's pinned today is: periods
 * ("the last 30 days") then resolve around the sandbox's demo data.
 */
export function clockAt(today: string): () => number {
  const offset = Date.parse(`${today}T12:00:00Z`) - Date.now();
  return () => Date.now() + offset;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const sandboxOptions: SandboxOptions = { port: 0, today: TODAY, ...options.sandbox };
  const sandbox = await startSandbox(sandboxOptions);
  const clock = sandboxOptions.today === undefined ? {} : { now: clockAt(sandboxOptions.today) };
  const gateway = await createGateway(testConfig(sandbox.url, options.env), { ...clock, ...options.gateway });
  const endpoint = `${gateway.url}/graphql`;
  return {
    sandbox,
    gateway,
    endpoint,
    gql: <T>(query: string, variables?: Record<string, unknown>, key: string | null = KEY_1) =>
      postGraphQL<T>(endpoint, { query, variables }, key === null ? {} : { authorization: `Bearer ${key}` }),
    async close() {
      await gateway.close();
      await sandbox.close();
    },
  };
}

/** A stack for the whole file: started before its tests, log cleared before each, closed after. */
export function useStack(options: StackOptions = {}): Stack {
  let started: Stack | undefined;
  beforeAll(async () => {
    started = await startStack(options);
  });
  beforeEach(() => started?.sandbox.log.reset());
  afterAll(() => started?.close());
  const current = (): Stack => {
    if (started === undefined) throw new Error('useStack(): the stack is started in beforeAll; use it inside tests and hooks');
    return started;
  };
  return {
    get sandbox() {
      return current().sandbox;
    },
    get gateway() {
      return current().gateway;
    },
    get endpoint() {
      return current().endpoint;
    },
    gql: (query, variables, key) => current().gql(query, variables, key),
    close: () => current().close(),
  };
}

/** The data of a response that must have succeeded: fails the test, showing the errors, otherwise. */
export function dataOf<T>(response: GraphQLResponse<T>): T {
  expect(response.errors, 'errors').toBeUndefined();
  if (response.data === undefined || response.data === null) throw new Error(`no data (HTTP ${response.status})`);
  return response.data;
}

/** The errors of a response that must have failed. */
export function errorsOf(response: GraphQLResponse<unknown>): GraphQLErrorJson[] {
  if (response.errors === undefined || response.errors.length === 0) {
    throw new Error(`expected errors, got ${JSON.stringify(response.data)}`);
  }
  return response.errors;
}

/** The first error of a response that must have failed. */
export function firstError(response: GraphQLResponse<unknown>): GraphQLErrorJson {
  const [first] = errorsOf(response);
  if (first === undefined) throw new Error('no error');
  return first;
}

/** A value that must be there (a nullable field, a list's item): fails the test, naming it, otherwise. */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`${what}: expected a value, got ${String(value)}`);
  return value;
}

/** The first item of a list that must not be empty. */
export function first<T>(items: readonly T[]): T {
  return present(items[0], 'the first item of the list');
}

/** The error codes of a response, in order. */
export const errorCodes = (response: GraphQLResponse<unknown>): unknown[] => (response.errors ?? []).map((error) => error.extensions?.code);

/** The REST requests the sandbox saw, as "METHOD /path?sorted=query". */
export function restCalls(sandbox: Sandbox): string[] {
  return sandbox.log.entries.map((entry) => {
    const query = new URLSearchParams(Object.entries(entry.query).sort(([a], [b]) => a.localeCompare(b))).toString();
    return `${entry.method} ${entry.path}${query ? `?${query}` : ''}`;
  });
}

/** The mutations of the suites, selecting every scalar field of a website. */
export const WEBSITE_FIELDS = 'id domain privacy passwordProtected emailReports excludeBots excludeParams excludeIps favorite';
export const CREATE_WEBSITE = `mutation($input: CreateWebsiteInput!) { createWebsite(input: $input) {
  website { ${WEBSITE_FIELDS} } userErrors { field message code } } }`;
export const UPDATE_WEBSITE = `mutation($id: ID!, $input: UpdateWebsiteInput!) { updateWebsite(id: $id, input: $input) {
  website { ${WEBSITE_FIELDS} } userErrors { field message code } } }`;
export const DELETE_WEBSITE = 'mutation($id: ID!) { deleteWebsite(id: $id) { deletedId userErrors { field message code } } }';

/** Website as WEBSITE_FIELDS selects it. */
export interface WebsiteData {
  id: string;
  domain: string;
  privacy: 'PUBLIC' | 'PRIVATE' | 'PASSWORD';
  passwordProtected: boolean;
  emailReports: boolean;
  excludeBots: boolean;
  excludeParams: string[] | null;
  excludeIps: string[] | null;
  favorite: boolean | null;
}

export interface UserErrorData {
  field: string[] | null;
  message: string;
  code: string;
}

export interface WebsitePayloadData {
  website: WebsiteData | null;
  userErrors: UserErrorData[];
}

/** `pageInfo` with every field, as the lists answer it. */
export interface PageInfoData {
  page: number;
  perPage: number;
  lastPage: number;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** The rows of a statistic, as the tests read them. */
export interface StatListData {
  nodes: { value: string; count: number }[];
}

/** What FIXED_DASHBOARD answers. */
export interface FixedDashboardData {
  website: {
    id: string;
    domain: string;
    privacy: string;
    visitors: StatListData;
    pages: StatListData & { totalCount: number };
    countries: StatListData;
    browsers: StatListData;
    referrers: StatListData & { pageInfo: { hasNextPage: boolean } };
  } | null;
}

/**
 * A dashboard like the docs', over fixed dates around the sandbox's TODAY (the docs' own examples
 * run elsewhere): a website and five of its statistics, 1 + 5 upstream reads.
 */
export const FIXED_DASHBOARD = `query Dashboard {
  website(id: "1") {
    id
    domain
    privacy
    visitors: stats(name: VISITOR, from: "2026-02-14", to: "2026-03-15", sortBy: VALUE, sort: ASC, perPage: 50) {
      nodes { value count }
    }
    pages: stats(name: PAGE, from: "2026-02-14", to: "2026-03-15") { nodes { value count } totalCount }
    countries: stats(name: COUNTRY, from: "2026-02-14", to: "2026-03-15") { nodes { value count } }
    browsers: stats(name: BROWSER, from: "2026-02-14", to: "2026-03-15", perPage: 25) { nodes { value count } }
    referrers: stats(name: REFERRER, from: "2026-02-14", to: "2026-03-15") { nodes { value count } pageInfo { hasNextPage } }
  }
}`;

/**
 * A sample's value on the gateway's metrics listener (METRICS_PORT=0 in the test's env), summed over its
 * label sets; 0 when absent. Tests wait on these (`until`) for a state: no request active, no topic polled.
 */
export async function metricOf(gateway: Gateway, name: string): Promise<number> {
  if (gateway.metricsUrl === null) throw new Error('metricOf: start the gateway with METRICS_PORT=0');
  const text = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Polls `check` every 50 ms until it holds; past `withinMs` (a safety net, not a bound), fails naming `what`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, withinMs = 15_000): Promise<void> {
  for (const deadline = performance.now() + withinMs; !(await check()); ) {
    if (performance.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
