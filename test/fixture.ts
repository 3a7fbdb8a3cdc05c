// Shared test harness: the sandbox and the gateway on ephemeral ports, spoken to over real HTTP.
import { loadConfig, type Config } from '../src/config.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';
import { createGateway, type Gateway, type GatewayOptions } from '../src/http/server.js';

export const TODAY = '2026-03-15';
export const KEY_1 = 'sandbox-key-1';
export const KEY_2 = 'sandbox-key-2';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
}

export interface Stack {
  sandbox: Sandbox;
  gateway: Gateway;
  endpoint: string;
  gql<T = any>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export function testConfig(upstreamUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({ PORT: '0', UPSTREAM_URL: upstreamUrl, LOG_LEVEL: 'silent', ...env });
}

export async function postGraphQL<T>(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<T>> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Omit<GraphQLResponse<T>, 'status' | 'headers'>;
  return { status: response.status, headers: response.headers, ...json };
}

export async function startStack(
  options: { sandbox?: SandboxOptions; env?: Record<string, string>; gateway?: GatewayOptions } = {},
): Promise<Stack> {
  const sandbox = await startSandbox({ port: 0, today: TODAY, ...options.sandbox });
  const gateway = await createGateway(testConfig(sandbox.url, options.env), options.gateway);
  const endpoint = `${gateway.url}/graphql`;
  return {
    sandbox,
    gateway,
    endpoint,
    gql: (query, variables, key = KEY_1) =>
      postGraphQL(endpoint, { query, variables }, key === null ? {} : { authorization: `Bearer ${key}` }),
    async close() {
      await gateway.close();
      await sandbox.close();
    },
  };
}

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
