// HIVE GATEWAY OVER OPENAPI: A BENCHMARK YARDSTICK, NOT THE PRODUCT. The floor pass measures a
// well-known JavaScript gateway serving the same dashboard from the same sandbox: Hive Gateway
// (@graphql-hive/gateway) over an OpenAPI source, composed with GraphQL Mesh (@omnigraph/openapi and
// @graphql-mesh/compose-cli) at bench time, with every setting left at its default.
//
// The OpenAPI document below describes only the two REST reads the dashboard makes: one website, and one
// page of a statistic. The harness composes it into a supergraph file in a temporary folder (by running
// bench/hive-compose.ts, which needs the sandbox's address, known only once it listens), then starts
// `hive-gateway supergraph <file>` as a process of its own. The caller's Authorization header is sent on
// to the sandbox with every read (`operationHeaders`).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT, freePort, spawnServer, type ChildServer } from './processes.js';
import type { ScenarioContext } from './scenarios.js';
import { CONTRACT_STAT_NAMES } from '../src/sandbox/dialect.js';

/** The composing script, relative to the project root. */
export const HIVE_COMPOSE_SCRIPT = 'dist-bench/bench/hive-compose.js';

const json = (schema: Record<string, unknown>): Record<string, unknown> => ({
  description: 'OK',
  content: { 'application/json': { schema } },
});
const query = (name: string, schema: Record<string, unknown>, required = false): Record<string, unknown> => ({
  name,
  in: 'query',
  required,
  schema,
});

/**
 * An OpenAPI 3 document of the two reads of the dashboard (the sandbox's answers, as the contract's part
 * B describes them): GET /websites/{id} and GET /stats/{website_id}. Its paths are relative to the
 * endpoint the composition is given (the sandbox's /api/v1).
 */
export const OPENAPI_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Web analytics REST API v1: the dashboard reads (bench only)', version: '1' },
  paths: {
    '/websites/{id}': {
      get: {
        operationId: 'website',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': json({ $ref: '#/components/schemas/WebsiteAnswer' }) },
      },
    },
    '/stats/{website_id}': {
      get: {
        operationId: 'stats',
        parameters: [
          { name: 'website_id', in: 'path', required: true, schema: { type: 'integer' } },
          query('name', { type: 'string', enum: CONTRACT_STAT_NAMES }, true),
          query('from', { type: 'string' }, true),
          query('to', { type: 'string' }, true),
          query('sort_by', { type: 'string', enum: ['count', 'value'] }),
          query('sort', { type: 'string', enum: ['desc', 'asc'] }),
          query('per_page', { type: 'integer' }),
          query('page', { type: 'integer' }),
        ],
        responses: { '200': json({ $ref: '#/components/schemas/StatPage' }) },
      },
    },
  },
  components: {
    schemas: {
      Website: {
        type: 'object',
        required: ['id', 'domain', 'privacy'],
        properties: {
          id: { type: 'integer' },
          domain: { type: 'string' },
          privacy: { type: 'integer' },
          email: { type: 'integer' },
          password: { type: 'boolean' },
          exclude_bots: { type: 'integer' },
          exclude_params: { type: 'string', nullable: true },
          exclude_ips: { type: 'string', nullable: true },
          favorite: { type: 'integer' },
          created_at: { type: 'string' },
          updated_at: { type: 'string' },
        },
      },
      WebsiteAnswer: {
        type: 'object',
        required: ['data'],
        properties: { data: { $ref: '#/components/schemas/Website' }, status: { type: 'integer' } },
      },
      Stat: {
        type: 'object',
        required: ['value', 'count'],
        properties: { value: { type: 'string' }, count: { type: 'integer' } },
      },
      PageLinks: {
        type: 'object',
        properties: {
          first: { type: 'string', nullable: true },
          last: { type: 'string', nullable: true },
          prev: { type: 'string', nullable: true },
          next: { type: 'string', nullable: true },
        },
      },
      PageMeta: {
        type: 'object',
        required: ['current_page', 'last_page', 'per_page', 'total'],
        properties: {
          current_page: { type: 'integer' },
          from: { type: 'integer', nullable: true },
          last_page: { type: 'integer' },
          path: { type: 'string' },
          per_page: { type: 'integer' },
          to: { type: 'integer', nullable: true },
          total: { type: 'integer' },
        },
      },
      StatPage: {
        type: 'object',
        required: ['data', 'meta'],
        properties: {
          data: { type: 'array', items: { $ref: '#/components/schemas/Stat' } },
          links: { $ref: '#/components/schemas/PageLinks' },
          meta: { $ref: '#/components/schemas/PageMeta' },
          status: { type: 'integer' },
        },
      },
    },
  },
} as const;

/** The dashboard's six statistics as the floor and the gateway ask them (bench/scenarios.ts), in REST terms. */
const DASHBOARD_STATS = [
  { alias: 'visitors', name: 'visitor', sortBy: 'value', sort: 'asc', perPage: 50, extra: '' },
  { alias: 'pages', name: 'page', sortBy: 'count', sort: 'desc', perPage: 10, extra: ' meta { total }' },
  { alias: 'countries', name: 'country', sortBy: 'count', sort: 'desc', perPage: 10, extra: '' },
  { alias: 'browsers', name: 'browser', sortBy: 'count', sort: 'desc', perPage: 25, extra: '' },
  { alias: 'referrers', name: 'referrer', sortBy: 'count', sort: 'desc', perPage: 10, extra: ' meta { current_page last_page }' },
  { alias: 'systems', name: 'operating_system', sortBy: 'count', sort: 'desc', perPage: 10, extra: '' },
] as const;

/**
 * The dashboard in the composed schema's terms: the website and its six statistics, each with every
 * parameter the gateway sends, so the sandbox gets the same seven reads with the same query strings.
 */
export function hiveDashboardBody(context: ScenarioContext): string {
  const id = Number(context.websiteId);
  const stats = DASHBOARD_STATS.map(
    (stat) =>
      `${stat.alias}: stats(website_id: ${id}, name: ${stat.name}, from: "${context.from}", to: "${context.to}", ` +
      `sort_by: ${stat.sortBy}, sort: ${stat.sort}, per_page: ${stat.perPage}, page: 1) { data { value count }${stat.extra} }`,
  );
  const text = `query Dashboard { website(id: ${id}) { data { id domain privacy } } ${stats.join(' ')} }`;
  return JSON.stringify({ operationName: 'Dashboard', query: text });
}

type Rows = { value: unknown; count: unknown }[];

/**
 * What both answers must agree on: the website's domain and each statistic's rows (value and count), from
 * the gateway's `data` (scenario "dashboard") or Hive Gateway's; null when the shape is not the expected one.
 */
export function dashboardRows(data: unknown, from: 'gateway' | 'hive'): string | null {
  const root = data as Record<string, unknown> | null;
  if (!root) return null;
  const website = from === 'gateway' ? (root.website as Record<string, unknown> | null) : (root.website as { data?: unknown })?.data;
  const domain = (website as { domain?: unknown } | null | undefined)?.domain;
  if (typeof domain !== 'string') return null;
  const rows: Record<string, Rows> = {};
  for (const { alias } of DASHBOARD_STATS) {
    const list = from === 'gateway' ? (website as Record<string, { nodes?: Rows }>)[alias]?.nodes : (root[alias] as { data?: Rows })?.data;
    if (!Array.isArray(list)) return null;
    rows[alias] = list.map((row) => ({ value: row.value, count: row.count }));
  }
  return JSON.stringify({ domain, rows });
}

/** A Hive Gateway process serving the composed supergraph; its folder is removed when it stops. */
export interface HiveGateway extends ChildServer {
  /** The supergraph file it serves. */
  supergraph: string;
}

/**
 * Composes the OpenAPI document against `upstreamUrl` (the sandbox) into a supergraph file under a new
 * temporary folder, then starts Hive Gateway on it: 127.0.0.1, a free port, one process (its default),
 * NODE_ENV=production, the given node flags.
 */
export async function startHiveGateway(upstreamUrl: string, nodeArgs: readonly string[] = []): Promise<HiveGateway> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-hive-'));
  const supergraph = join(folder, 'supergraph.graphql');
  try {
    await promisify(execFile)(process.execPath, [join(PROJECT_ROOT, HIVE_COMPOSE_SCRIPT)], {
      cwd: folder,
      env: { ...process.env, HIVE_UPSTREAM_URL: upstreamUrl, HIVE_SUPERGRAPH_FILE: supergraph },
      timeout: 120_000,
    });
    const port = await freePort();
    const bin = join(dirname(createRequire(import.meta.url).resolve('@graphql-hive/gateway/package.json')), 'dist', 'bin.js');
    const child = await spawnServer({
      script: bin,
      args: ['supergraph', supergraph, '--host', '127.0.0.1', '--port', String(port)],
      env: { NODE_ENV: 'production' },
      ready: new RegExp(`Listening on (http://127\\.0\\.0\\.1:${port})`),
      nodeArgs,
      cwd: folder,
      timeoutMs: 60_000,
    });
    return {
      ...child,
      url: `${child.url}/graphql`,
      supergraph,
      stop: async () => {
        await child.stop();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr;
    throw new Error(`Hive Gateway: ${(error as Error).message.split('\n')[0] ?? ''}${stderr ? `\n${stderr.slice(-2000)}` : ''}`);
  }
}
