// The six scenarios: what a client asks the gateway, and the same data fetched straight from the
// REST API the way a browser page would without the gateway.
import { comparedRange } from '../src/analytics/series.js';
import type { RestCall, RestClient } from './rest.js';

export const SCENARIO_NAMES = ['website', 'dashboard', 'dashboard-dedup', 'websites-list', 'create-delete', 'dashboard-rich'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export type RestMode = 'sequential' | 'parallel';

export interface ScenarioContext {
  /** The sandbox's today and 29 days before it: the last 30 days, YYYY-MM-DD. */
  from: string;
  to: string;
  /** The demo website the dashboards show. */
  websiteId: string;
  /** A domain no other request of this run uses. */
  uniqueDomain(): string;
}

/** Values carried from one step of a chain to the next (autocannon's per-connection context). */
export type ChainContext = Record<string, unknown>;

/** One GraphQL request of the chain a connection loops over. */
export interface GraphqlStep {
  /** The JSON body; null when the chain cannot go on (e.g. the create it deletes failed). */
  body(context: ChainContext): string | null;
  /** Whether the body builder depends on the context or on a counter (autocannon then rebuilds it each time). */
  dynamic: boolean;
  /** Reads what the next steps need from the parsed response. */
  after?(response: unknown, context: ChainContext): void;
}

export interface Scenario {
  name: ScenarioName;
  number: number;
  title: string;
  /** REST calls one GraphQL request should take: the distinct reads, or the one write. */
  expectedCalls: number;
  /** Whether the REST paths hold ids created during the run (compared as `{id}` then). */
  createsIds: boolean;
  steps(context: ScenarioContext): GraphqlStep[];
  /** A response body is a success: no GraphQL errors (nor user errors for mutations). */
  ok(body: string): boolean;
  /**
   * One page of the REST baseline; calls `record(ms)` once per GraphQL-request equivalent with
   * the time its calls took.
   */
  rest(client: RestClient, mode: RestMode, context: ScenarioContext, record: (ms: number) => void): Promise<void>;
}

export interface StatSpec {
  alias: string;
  name: string;
  /** Extra GraphQL arguments and the REST parameters they become. */
  args?: { sortBy?: 'VALUE'; sort?: 'ASC'; perPage?: number };
  selection: string;
}

export const DASHBOARD_STATS: readonly StatSpec[] = [
  { alias: 'visitors', name: 'VISITOR', args: { sortBy: 'VALUE', sort: 'ASC', perPage: 50 }, selection: 'nodes { value count }' },
  { alias: 'pages', name: 'PAGE', selection: 'nodes { value count } totalCount' },
  { alias: 'countries', name: 'COUNTRY', selection: 'nodes { value count }' },
  { alias: 'browsers', name: 'BROWSER', args: { perPage: 25 }, selection: 'nodes { value count }' },
  { alias: 'referrers', name: 'REFERRER', selection: 'nodes { value count } pageInfo { hasNextPage }' },
  { alias: 'systems', name: 'OPERATING_SYSTEM', selection: 'nodes { value count }' },
];
const VISITORS = DASHBOARD_STATS[0] as StatSpec;

function statField(spec: StatSpec, context: ScenarioContext, alias = spec.alias, selection = spec.selection): string {
  const args = [`name: ${spec.name}`, `from: "${context.from}"`, `to: "${context.to}"`];
  if (spec.args?.sortBy) args.push(`sortBy: ${spec.args.sortBy}`);
  if (spec.args?.sort) args.push(`sort: ${spec.args.sort}`);
  if (spec.args?.perPage) args.push(`perPage: ${spec.args.perPage}`);
  return `${alias}: stats(${args.join(', ')}) { ${selection} }`;
}

/** The REST call of a statistic, with the parameters the gateway sends (defaults included). */
function statCall(spec: StatSpec, websiteId: string, context: Pick<ScenarioContext, 'from' | 'to'>): RestCall {
  return {
    method: 'GET',
    path: `/stats/${websiteId}`,
    query: {
      name: spec.name.toLowerCase(),
      from: context.from,
      to: context.to,
      sort_by: spec.args?.sortBy === 'VALUE' ? 'value' : 'count',
      sort: spec.args?.sort === 'ASC' ? 'asc' : 'desc',
      per_page: String(spec.args?.perPage ?? 10),
      page: '1',
    },
  };
}

function staticStep(operationName: string, query: string): GraphqlStep {
  const body = JSON.stringify({ operationName, query });
  return { body: () => body, dynamic: false };
}

const noErrors = (body: string): boolean => !body.includes('"errors"');

/** Times calls one after another, or all at once. */
async function fetchAll(client: RestClient, mode: RestMode, calls: readonly RestCall[]): Promise<unknown[]> {
  if (mode === 'parallel') return Promise.all(calls.map((call) => client.call(call)));
  const results: unknown[] = [];
  for (const call of calls) results.push(await client.call(call));
  return results;
}

async function timed(record: (ms: number) => void, work: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const result = await work();
  record(performance.now() - started);
  return result;
}

const websiteCall = (id: string): RestCall => ({ method: 'GET', path: `/websites/${id}` });

function dashboardQuery(context: ScenarioContext, twice: boolean): string {
  const fields = DASHBOARD_STATS.flatMap((spec) => {
    const once = statField(spec, context);
    // A second widget asking the same statistic, under another alias and with another selection.
    return twice ? [once, statField(spec, context, `${spec.alias}Again`, 'totalCount nodes { value }')] : [once];
  });
  return `query Dashboard { website(id: "${context.websiteId}") { id domain privacy ${fields.join(' ')} } }`;
}

/** The dashboard's distinct reads, each once: its website, then its statistics in DASHBOARD_STATS's order. */
export function dashboardCalls(context: Pick<ScenarioContext, 'websiteId' | 'from' | 'to'>): RestCall[] {
  return [websiteCall(context.websiteId), ...DASHBOARD_STATS.map((spec) => statCall(spec, context.websiteId, context))];
}

async function dashboardRest(client: RestClient, mode: RestMode, context: ScenarioContext, record: (ms: number) => void): Promise<void> {
  await timed(record, () => fetchAll(client, mode, dashboardCalls(context)));
}

/**
 * A richer view: a summary against the previous period, two series, top pages with their share and
 * countries. Its reads: the website, every day of both ranges for visitors and pageviews (one page of
 * 100 each), the pages' first page and the first page of 100 rows `share` sums, the countries.
 */
function richDashboardQuery(context: ScenarioContext): string {
  const range = `from: "${context.from}", to: "${context.to}"`;
  return (
    `query RichDashboard { website(id: "${context.websiteId}") { id domain ` +
    `summary(${range}, compare: PREVIOUS_PERIOD) { current { visitors pageviews } previous { visitors pageviews } visitorsChange pageviewsChange } ` +
    `visitors: series(metric: VISITORS, ${range}) { total points { date count } } ` +
    `pageviews: series(metric: PAGEVIEWS, ${range}) { total points { date count } } ` +
    `pages: stats(name: PAGE, ${range}) { nodes { value count share } } ` +
    `countries: stats(name: COUNTRY, ${range}) { nodes { value count } } } }`
  );
}

/** The rich dashboard's reads, as the gateway sends them. */
export function richDashboardCalls(context: Pick<ScenarioContext, 'websiteId' | 'from' | 'to'>): RestCall[] {
  const { websiteId } = context;
  const daily = (name: string, range: { from: string; to: string }): RestCall => ({
    method: 'GET',
    path: `/stats/${websiteId}`,
    query: { name, from: range.from, to: range.to, sort_by: 'value', sort: 'asc', per_page: '100', page: '1' },
  });
  const previous = comparedRange(context, 'PREVIOUS_PERIOD');
  const pages = statCall({ alias: 'pages', name: 'PAGE', selection: '' }, websiteId, context);
  return [
    websiteCall(websiteId),
    daily('visitor', context),
    daily('pageview', context),
    daily('visitor', previous),
    daily('pageview', previous),
    pages,
    { ...pages, query: { ...pages.query, per_page: '100' } },
    statCall({ alias: 'countries', name: 'COUNTRY', selection: '' }, websiteId, context),
  ];
}

/** The websites the list scenario shows: a page of 25. */
export const LIST_SIZE = 25;

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  website: {
    name: 'website',
    number: 1,
    title: 'One website by id',
    expectedCalls: 1,
    createsIds: false,
    steps: (context) => [
      staticStep('Website', `query Website { website(id: "${context.websiteId}") { id domain privacy favorite excludeBots createdAt } }`),
    ],
    ok: noErrors,
    rest: async (client, mode, context, record) => {
      await timed(record, () => fetchAll(client, mode, [websiteCall(context.websiteId)]));
    },
  },
  dashboard: {
    name: 'dashboard',
    number: 2,
    title: 'Dashboard: one website with six statistics',
    expectedCalls: 1 + DASHBOARD_STATS.length,
    createsIds: false,
    steps: (context) => [staticStep('Dashboard', dashboardQuery(context, false))],
    ok: noErrors,
    rest: dashboardRest,
  },
  'dashboard-dedup': {
    name: 'dashboard-dedup',
    number: 3,
    title: 'Dashboard with each statistic asked twice under aliases (deduplication)',
    expectedCalls: 1 + DASHBOARD_STATS.length,
    createsIds: false,
    steps: (context) => [staticStep('Dashboard', dashboardQuery(context, true))],
    ok: noErrors,
    rest: dashboardRest,
  },
  'websites-list': {
    name: 'websites-list',
    number: 4,
    title: `A list of ${LIST_SIZE} websites, each with its 30-day visitor statistics`,
    expectedCalls: 1 + LIST_SIZE,
    createsIds: false,
    steps: (context) => [
      staticStep(
        'Websites',
        `query Websites { websites(perPage: ${LIST_SIZE}) { totalCount nodes { id domain ${statField(VISITORS, context)} } } }`,
      ),
    ],
    ok: noErrors,
    rest: async (client, mode, context, record) => {
      // The statistics need the ids of the list, so even "parallel" takes two round trips.
      await timed(record, async () => {
        const page = (await client.call({
          method: 'GET',
          path: '/websites',
          query: { sort_by: 'id', sort: 'desc', per_page: String(LIST_SIZE), page: '1' },
        })) as { data: { id: number }[] };
        await fetchAll(
          client,
          mode,
          page.data.map((website) => statCall(VISITORS, String(website.id), context)),
        );
      });
    },
  },
  'create-delete': {
    name: 'create-delete',
    number: 5,
    title: 'Create then delete a website (two GraphQL requests, one write each)',
    expectedCalls: 1,
    createsIds: true,
    steps: (context) => [
      {
        dynamic: true,
        body: () =>
          JSON.stringify({
            operationName: 'Create',
            query:
              'mutation Create($domain: String!) { createWebsite(input: { domain: $domain }) { website { id domain } userErrors { field message code } } }',
            variables: { domain: context.uniqueDomain() },
          }),
        after: (response, chain) => {
          const id = (response as { data?: { createWebsite?: { website?: { id?: unknown } | null } } }).data?.createWebsite?.website?.id;
          if (typeof id === 'string') chain.id = id;
        },
      },
      {
        dynamic: true,
        body: (chain) =>
          typeof chain.id === 'string'
            ? JSON.stringify({
                operationName: 'Delete',
                query: 'mutation Delete($id: ID!) { deleteWebsite(id: $id) { deletedId userErrors { field message code } } }',
                variables: { id: chain.id },
              })
            : null,
      },
    ],
    ok: (body) => noErrors(body) && body.includes('"userErrors":[]'),
    // Each write is one GraphQL request: sequential and parallel are the same single call.
    rest: async (client, _mode, context, record) => {
      const created = (await timed(record, () =>
        client.call({ method: 'POST', path: '/websites', form: { domain: context.uniqueDomain() } }),
      )) as { data: { id: number } };
      await timed(record, () => client.call({ method: 'DELETE', path: `/websites/${created.data.id}` }));
    },
  },
  'dashboard-rich': {
    name: 'dashboard-rich',
    number: 6,
    title: 'Rich dashboard: a summary against the previous period, two series, top pages with their share, countries',
    expectedCalls: 8,
    createsIds: false,
    steps: (context) => [staticStep('RichDashboard', richDashboardQuery(context))],
    ok: noErrors,
    rest: async (client, mode, context, record) => {
      await timed(record, () => fetchAll(client, mode, richDashboardCalls(context)));
    },
  },
};
