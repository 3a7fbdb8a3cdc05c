// One GraphQL API over installs of different versions: every suite here runs against both dialects
// of the sandbox, the published contract (docs/CONTRACT.md parts A/B) and the older install (part C).
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CREATE_WEBSITE,
  DELETE_WEBSITE,
  KEY_1,
  KEY_2,
  UPDATE_WEBSITE,
  WEBSITE_FIELDS,
  present,
  dataOf,
  errorCodes,
  firstError,
  restCalls,
  startStack,
  useStack,
  type Stack,
  type UserErrorData,
  type WebsiteData,
  type WebsitePayloadData,
  type PageInfoData,
} from '../fixture.js';

type Dialect = 'contract' | 'legacy';

interface StatRow {
  value: string;
  count: number;
}
interface StatNodes {
  nodes: StatRow[];
}
interface StatPage {
  nodes: { value: string }[];
}
/** `{ website(id) { … } }`: null (with NOT_FOUND) when the caller has no such website. */
interface WebsiteResult<W> {
  website: W | null;
}
interface WebsiteIdsData {
  websites: { nodes: { id: string }[] };
}
interface TotalCountData {
  stats: { totalCount: number };
}
type DomainData = WebsiteResult<{ domain: string }>;
type TwoStatsData = WebsiteResult<{ v: { totalCount: number }; c: { totalCount: number } }>;
interface CreateWebsiteData {
  createWebsite: WebsitePayloadData;
}
interface UpdateWebsiteData {
  updateWebsite: WebsitePayloadData;
}
interface DeleteWebsiteData {
  deleteWebsite: { deletedId: string | null; userErrors: UserErrorData[] };
}
/** The dashboard query of docs/queries.md. */
type DashboardData = WebsiteResult<{
  domain: string;
  privacy: WebsiteData['privacy'];
  visitors: StatNodes;
  pages: StatNodes & { totalCount: number };
  countries: StatNodes;
  browsers: StatNodes;
  referrers: StatNodes & { pageInfo: Pick<PageInfoData, 'hasNextPage'> };
}>;
/** The list query of docs/queries.md. */
interface DocsListData {
  websites: {
    totalCount: number;
    pageInfo: Pick<PageInfoData, 'page' | 'lastPage' | 'hasNextPage'>;
    nodes: { id: string; domain: string; favorite: boolean | null; visitors: StatNodes }[];
  };
}

/** `value`, failing the test when it is null or undefined. */
const queriesPage = readFileSync(new URL('../../docs/queries.md', import.meta.url), 'utf8');
function docsExample(pattern: RegExp, what: string): string {
  return present(pattern.exec(queriesPage)?.[1], `docs/queries.md ${what} example`);
}
const DOCS_DASHBOARD = docsExample(/```graphql\n(query Dashboard[\s\S]*?)```/, 'dashboard');
const DOCS_LIST = docsExample(/```graphql\n(\{\s*websites[\s\S]*?)```/, 'list');

const RANGE = 'from: "2026-03-01", to: "2026-03-15"';
const WHOLE_DEMO = 'from: "2025-11-16", to: "2026-03-15"';
const CONTRACT_STATS = [
  'BROWSER',
  'CAMPAIGN',
  'CITY',
  'CONTINENT',
  'COUNTRY',
  'DEVICE',
  'EVENT',
  'LANGUAGE',
  'OPERATING_SYSTEM',
  'PAGE',
  'PAGEVIEW',
  'REFERRER',
  'SCREEN_RESOLUTION',
  'VISITOR',
];
const LEGACY_ONLY_STATS = ['LANDING_PAGE', 'VISITOR_HOUR', 'PAGEVIEW_HOUR'];

/** What each dialect calls a statistic on the wire (docs/CONTRACT.md part C), written out independently. */
const LEGACY_WIRE: Record<string, string> = {
  OPERATING_SYSTEM: 'os',
  PAGEVIEW: 'pageviews',
  SCREEN_RESOLUTION: 'resolution',
  VISITOR: 'visitors',
  LANDING_PAGE: 'landing_page',
  VISITOR_HOUR: 'visitors_hours',
  PAGEVIEW_HOUR: 'pageviews_hours',
};
const wireName = (dialect: Dialect, name: string): string =>
  dialect === 'legacy' ? (LEGACY_WIRE[name] ?? name.toLowerCase()) : name.toLowerCase();

async function websiteIds(stack: Stack, key: string): Promise<string[]> {
  const response = await stack.gql<WebsiteIdsData>('{ websites(perPage: 100) { nodes { id } } }', {}, key);
  return dataOf(response).websites.nodes.map((node) => node.id);
}

const statsCalls = (stack: Stack): string[] => restCalls(stack.sandbox).filter((call) => call.startsWith('GET /api/v1/stats/'));

describe.each<Dialect>(['contract', 'legacy'])('against the %s dialect', (dialect) => {
  const stack = useStack({ sandbox: { dialect } });
  let mine: string[];
  let theirs: string[];
  beforeAll(async () => {
    mine = await websiteIds(stack, KEY_1);
    theirs = await websiteIds(stack, KEY_2);
  });
  beforeEach(() => {
    stack.sandbox.setKnobs({ rateLimit: null });
  });

  describe('the examples of docs/queries.md', () => {
    it('dashboard answers the website and every statistic with rows', async () => {
      const website = present(dataOf(await stack.gql<DashboardData>(DOCS_DASHBOARD)).website, 'website');
      expect(website.domain).toMatch(/\./);
      for (const alias of ['visitors', 'pages', 'countries', 'browsers', 'referrers'] as const) {
        expect(website[alias].nodes.length, alias).toBeGreaterThan(0);
      }
      for (const row of website.visitors.nodes) expect(row.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    });

    it('list answers every website with its sparkline, favorite null where the install has none', async () => {
      const data = dataOf(await stack.gql<DocsListData>(DOCS_LIST));
      expect(data.websites.totalCount).toBe(mine.length);
      for (const node of data.websites.nodes) {
        expect(node.visitors.nodes.length).toBeGreaterThan(0);
        if (dialect === 'legacy') expect(node.favorite).toBeNull();
        else expect(typeof node.favorite).toBe('boolean');
      }
    });
  });

  describe('statistics', () => {
    it('every statistic of the contract answers, under the name this install knows it by', async () => {
      // The sandbox's whole demo window (120 days to its today), so that every statistic has rows.
      const fields = CONTRACT_STATS.map(
        (name) => `${name}: stats(name: ${name}, ${WHOLE_DEMO}, perPage: 100) { totalCount nodes { value count } }`,
      );
      // The demo's oldest website has traffic of every kind (campaigns included).
      const oldest = mine[mine.length - 1];
      const response = await stack.gql<WebsiteResult<Record<string, StatNodes & { totalCount: number }>>>(
        `{ website(id: "${oldest}") { ${fields.join('\n')} } }`,
      );
      const website = present(dataOf(response).website, 'website');
      for (const name of CONTRACT_STATS) expect(website[name]?.totalCount, name).toBeGreaterThan(0);
      expect(website.VISITOR?.totalCount).toBe(120); // a row per day
      const sent = new Set(stack.sandbox.log.entries.filter((e) => e.status === 200).map((e) => e.query.name));
      for (const name of CONTRACT_STATS) expect(sent, name).toContain(wireName(dialect, name));
    });

    it.each(LEGACY_ONLY_STATS)('%s: rows on the older install, UNSUPPORTED naming it on the contract', async (name) => {
      const query = `{ website(id: "${mine[0]}") { domain s: stats(name: ${name}, ${RANGE}, perPage: 25) { nodes { value count } } } }`;
      const response = await stack.gql<WebsiteResult<{ domain: string; s: StatNodes }>>(query);
      if (dialect === 'legacy') {
        const website = present(dataOf(response).website, 'website');
        expect(website.s.nodes.length).toBeGreaterThan(0);
        if (name !== 'LANDING_PAGE') for (const row of website.s.nodes) expect(row.value).toMatch(/^([01]\d|2[0-3])$/);
        else for (const row of website.s.nodes) expect(row.value).toMatch(/^\//);
      } else {
        expect(response.errors).toHaveLength(1);
        const error = firstError(response);
        expect(error.extensions).toMatchObject({ code: 'UNSUPPORTED' });
        expect(error.message).toContain(name);
        expect(error.path).toEqual(['website', 's']);
        // Remembered: asked again, it costs no upstream call.
        stack.sandbox.log.reset();
        const again = await stack.gql<TotalCountData>(`{ stats(websiteId: "${mine[0]}", name: ${name}, ${RANGE}) { totalCount } }`);
        expect(firstError(again).extensions).toMatchObject({ code: 'UNSUPPORTED' });
        expect(statsCalls(stack)).toEqual([]);
      }
    });

    it('reads every page of a statistic through whichever envelope the install sends', async () => {
      type FirstPage = { stats: StatPage & { totalCount: number; pageInfo: PageInfoData } };
      const first = await stack.gql<FirstPage>(`{ stats(websiteId: "${mine[0]}", name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC) {
        nodes { value } totalCount pageInfo { page perPage lastPage hasNextPage hasPreviousPage } } }`);
      const firstPage = dataOf(first).stats;
      expect(firstPage.totalCount).toBe(15);
      expect(firstPage.pageInfo).toEqual({ page: 1, perPage: 10, lastPage: 2, hasNextPage: true, hasPreviousPage: false });
      type SecondPage = { stats: StatPage & { pageInfo: Omit<PageInfoData, 'perPage'> } };
      const second =
        await stack.gql<SecondPage>(`{ stats(websiteId: "${mine[0]}", name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC, page: 2) {
        nodes { value } pageInfo { page lastPage hasNextPage hasPreviousPage } } }`);
      const secondPage = dataOf(second).stats;
      expect(secondPage.nodes.map((n) => n.value)).toEqual(['2026-03-11', '2026-03-12', '2026-03-13', '2026-03-14', '2026-03-15']);
      expect(secondPage.pageInfo).toEqual({ page: 2, lastPage: 2, hasNextPage: false, hasPreviousPage: true });
    });
  });

  describe("another user's website", () => {
    it('website: null with NOT_FOUND, and none of its statistics in the answer', async () => {
      const response = await stack.gql<WebsiteResult<{ domain: string; stats: StatNodes }>>(
        `{ website(id: "${theirs[0]}") { domain stats(name: COUNTRY, ${RANGE}) { nodes { value count } } } }`,
      );
      expect(response.data).toEqual({ website: null });
      expect(errorCodes(response)).toEqual(['NOT_FOUND']);
      expect(JSON.stringify(response)).not.toMatch(/"count"|"value"/);
    });

    it('Query.stats: NOT_FOUND and no statistic rows, whatever the install would serve', async () => {
      const response = await stack.gql<{ stats: StatNodes & { totalCount: number } }>(
        `{ stats(websiteId: "${theirs[0]}", name: COUNTRY, ${RANGE}) { nodes { value count } totalCount } }`,
      );
      expect(response.data).toBeNull();
      expect(errorCodes(response)).toEqual(['NOT_FOUND']);
      expect(JSON.stringify(response)).not.toMatch(/"count"|"value"|"totalCount"/);
      expect(restCalls(stack.sandbox)).toContain(`GET /api/v1/websites/${theirs[0]}`);
    });

    it('an unknown id: the same NOT_FOUND', async () => {
      const response = await stack.gql<TotalCountData>(`{ stats(websiteId: "999999", name: COUNTRY, ${RANGE}) { totalCount } }`);
      expect(errorCodes(response)).toEqual(['NOT_FOUND']);
    });
  });

  describe('writes', () => {
    it('create, read, update and delete with every field', async () => {
      const input = {
        domain: `crud-${dialect}.example.com`,
        privacy: 'PASSWORD',
        password: 'pa55word',
        emailReports: true,
        excludeBots: false,
        excludeParams: ['utm_source', 'fbclid'],
        excludeIps: ['10.0.0.1', '10.0.0.2'],
      };
      const created = dataOf(await stack.gql<CreateWebsiteData>(CREATE_WEBSITE, { input }));
      expect(created.createWebsite.userErrors).toEqual([]);
      const website = created.createWebsite.website;
      expect(website).toMatchObject({
        domain: input.domain,
        privacy: 'PASSWORD',
        passwordProtected: true,
        emailReports: true,
        excludeBots: false,
        excludeIps: input.excludeIps,
        // The older install stores exclude_params but never sends it back: null, not a guess.
        excludeParams: dialect === 'legacy' ? null : input.excludeParams,
        favorite: dialect === 'legacy' ? null : false,
      });

      const { id } = present(website, 'created website');
      const read = await stack.gql<WebsiteResult<WebsiteData>>(`{ website(id: "${id}") { ${WEBSITE_FIELDS} } }`);
      expect(dataOf(read).website).toEqual(website);

      const update = {
        privacy: 'PRIVATE',
        emailReports: false,
        excludeBots: true,
        excludeParams: ['ref'],
        excludeIps: [],
      };
      const updated = dataOf(await stack.gql<UpdateWebsiteData>(UPDATE_WEBSITE, { id, input: update }));
      expect(updated.updateWebsite.userErrors).toEqual([]);
      expect(updated.updateWebsite.website).toMatchObject({
        privacy: 'PRIVATE',
        emailReports: false,
        excludeBots: true,
        excludeIps: [],
        excludeParams: dialect === 'legacy' ? null : ['ref'],
      });
      const reread = await stack.gql<WebsiteResult<WebsiteData>>(`{ website(id: "${id}") { ${WEBSITE_FIELDS} } }`);
      expect(dataOf(reread).website).toEqual(updated.updateWebsite.website);

      const deleted = await stack.gql<DeleteWebsiteData>(DELETE_WEBSITE, { id });
      expect(dataOf(deleted).deleteWebsite).toEqual({ deletedId: id, userErrors: [] });
      const gone = await stack.gql<WebsiteResult<{ id: string }>>(`{ website(id: "${id}") { id } }`);
      expect(firstError(gone).extensions?.code).toBe('NOT_FOUND');
    });

    it("a create with only a domain answers the website with the install's defaults, in one call", async () => {
      const data = dataOf(await stack.gql<CreateWebsiteData>(CREATE_WEBSITE, { input: { domain: `only-domain-${dialect}.example.com` } }));
      expect(data.createWebsite.userErrors).toEqual([]);
      expect(data.createWebsite.website).toMatchObject({ privacy: 'PUBLIC', emailReports: false, passwordProtected: false });
      expect(restCalls(stack.sandbox).filter((call) => call.startsWith('GET'))).toEqual([]);
    });

    it('an update of an unknown or foreign id: NOT_FOUND in userErrors, whichever 404 body the install sends', async () => {
      for (const id of [theirs[0], '999999']) {
        const data = dataOf(await stack.gql<UpdateWebsiteData>(UPDATE_WEBSITE, { id, input: { emailReports: true } }));
        expect(data.updateWebsite.website).toBeNull();
        expect(data.updateWebsite.userErrors).toEqual([{ field: ['id'], message: `No website with id ${id}.`, code: 'NOT_FOUND' }]);
      }
    });

    it.each(['malformed', 'truncated', 'reset'] as const)(
      'a create whose 2xx answer is %s: the website is read back once and answered',
      async (answer) => {
        const domain = `unreadable-${answer}-${dialect}.example.com`;
        stack.sandbox.scriptFaults([{ kind: 'afterHandling', answer }]);
        const data = dataOf(await stack.gql<CreateWebsiteData>(CREATE_WEBSITE, { input: { domain, emailReports: true } }));
        expect(data.createWebsite.userErrors).toEqual([]);
        expect(data.createWebsite.website).toMatchObject({ domain, emailReports: true });
        const calls = restCalls(stack.sandbox);
        expect(calls).toHaveLength(2);
        expect(calls[0]).toBe('POST /api/v1/websites');
        expect(calls[1]).toMatch(/^GET \/api\/v1\/websites\?.*search=unreadable/);
      },
    );

    it('an update whose 2xx answer cannot be read: read back by id, the change shown', async () => {
      stack.sandbox.scriptFaults([{ kind: 'afterHandling', answer: 'malformed' }]);
      const data = dataOf(await stack.gql<UpdateWebsiteData>(UPDATE_WEBSITE, { id: mine[1], input: { excludeIps: ['192.0.2.7'] } }));
      expect(data.updateWebsite).toMatchObject({ website: { id: mine[1], excludeIps: ['192.0.2.7'] }, userErrors: [] });
      expect(restCalls(stack.sandbox)).toEqual([`PATCH /api/v1/websites/${mine[1]}`, `GET /api/v1/websites/${mine[1]}`]);
    });
  });

  describe('favorites', () => {
    it('websites(favorite: true): filtered on an install with favorites, UNSUPPORTED on one without', async () => {
      const response = await stack.gql<{ websites: { nodes: { id: string; favorite: boolean | null }[] } }>(
        '{ websites(favorite: true, perPage: 100) { nodes { id favorite } } }',
      );
      if (dialect === 'legacy') {
        expect(response.data).toBeNull();
        expect(response.errors).toHaveLength(1);
        expect(firstError(response).extensions).toMatchObject({ code: 'UNSUPPORTED', argument: 'favorite' });
      } else {
        for (const node of dataOf(response).websites.nodes) expect(node.favorite).toBe(true);
      }
    });

    it('an update with favorite: UNSUPPORTED in userErrors where it was ignored, the other fields applied', async () => {
      const data = dataOf(
        await stack.gql<UpdateWebsiteData>(UPDATE_WEBSITE, { id: mine[2], input: { favorite: true, emailReports: true } }),
      );
      expect(data.updateWebsite.website).toMatchObject({ id: mine[2], emailReports: true });
      if (dialect === 'legacy') {
        expect(data.updateWebsite.website?.favorite).toBeNull();
        expect(data.updateWebsite.userErrors).toEqual([
          { field: ['input', 'favorite'], message: expect.stringContaining('favorites') as string, code: 'UNSUPPORTED' },
        ]);
      } else {
        expect(data.updateWebsite.website?.favorite).toBe(true);
        expect(data.updateWebsite.userErrors).toEqual([]);
      }
    });
  });

  describe("the install's rate limit", () => {
    it("extensions.rateLimit says what the install said of the key's limit in its latest answer", async () => {
      stack.sandbox.setKnobs({ rateLimit: { limit: 60, windowMs: 60_000 } });
      const first = await stack.gql<DomainData>(`{ website(id: "${mine[0]}") { domain } }`);
      expect(first.extensions?.rateLimit).toEqual({ limit: 60, remaining: 59 });
      const second = await stack.gql<DomainData>(`{ website(id: "${mine[0]}") { domain } }`);
      expect(second.extensions?.rateLimit).toEqual({ limit: 60, remaining: 58 });
    });

    it('no rateLimit when the install sends no such headers', async () => {
      const response = await stack.gql<DomainData>(`{ website(id: "${mine[0]}") { domain } }`);
      expect(response.extensions).not.toHaveProperty('rateLimit');
    });
  });
});

describe.each<Dialect>(['contract', 'legacy'])('learning stat names (%s dialect)', (dialect) => {
  let stack: Stack;
  beforeEach(async () => {
    stack = await startStack({ sandbox: { dialect } });
  });
  afterEach(() => stack.close());

  it('the first request learns the names, later requests send the right name straight away', async () => {
    const ids = await websiteIds(stack, KEY_1);
    const query = `{ website(id: "${ids[0]}") { v: stats(name: VISITOR, ${RANGE}) { totalCount } c: stats(name: COUNTRY, ${RANGE}) { totalCount } } }`;
    stack.sandbox.log.reset();
    const first = await stack.gql<TwoStatsData>(query);
    expect(first.errors).toBeUndefined();
    const firstNames = statsCalls(stack)
      .map((call) => new URLSearchParams(call.split('?')[1]).get('name'))
      .sort();
    expect(firstNames).toEqual(dialect === 'legacy' ? ['country', 'visitor', 'visitors'] : ['country', 'visitor']);
    expect(first.extensions?.upstreamCalls).toBe(dialect === 'legacy' ? 4 : 3);

    // Another key, another request: the install's names are known for the life of the process.
    stack.sandbox.log.reset();
    const otherId = present((await websiteIds(stack, KEY_2))[0], 'a website of KEY_2');
    const later = await stack.gql<TwoStatsData>(query.replace(present(ids[0], 'a website of KEY_1'), otherId), undefined, KEY_2);
    expect(later.errors).toBeUndefined();
    const laterNames = statsCalls(stack)
      .map((call) => new URLSearchParams(call.split('?')[1]).get('name'))
      .sort();
    expect(laterNames).toEqual(['country', wireName(dialect, 'VISITOR')]);
    expect(later.extensions?.upstreamCalls).toBe(3);
  });

  it('concurrent first requests refuse at most one name between them', async () => {
    const ids = await websiteIds(stack, KEY_1);
    stack.sandbox.log.reset();
    const query = `{ website(id: "${ids[0]}") { s: stats(name: OPERATING_SYSTEM, ${RANGE}) { totalCount } } }`;
    const answers = await Promise.all(Array.from({ length: 5 }, () => stack.gql<WebsiteResult<{ s: { totalCount: number } }>>(query)));
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    const refused = stack.sandbox.log.entries.filter((entry) => entry.status === 422);
    expect(refused).toHaveLength(dialect === 'legacy' ? 1 : 0);
  });
});

describe('UPSTREAM_STAT_NAMES pins the names', () => {
  it('legacy: the older names from the first request, no refused name', async () => {
    const stack = await startStack({ sandbox: { dialect: 'legacy' }, env: { UPSTREAM_STAT_NAMES: 'legacy' } });
    try {
      const ids = await websiteIds(stack, KEY_1);
      stack.sandbox.log.reset();
      const { errors } = await stack.gql<TotalCountData>(
        `{ stats(websiteId: "${ids[0]}", name: SCREEN_RESOLUTION, ${RANGE}) { totalCount } }`,
      );
      expect(errors).toBeUndefined();
      expect(statsCalls(stack)).toHaveLength(1);
      expect(statsCalls(stack)[0]).toContain('name=resolution');
    } finally {
      await stack.close();
    }
  });

  it('contract: the three statistics the contract lacks are UNSUPPORTED with no upstream call', async () => {
    const stack = await startStack({ env: { UPSTREAM_STAT_NAMES: 'contract' } });
    try {
      const ids = await websiteIds(stack, KEY_1);
      stack.sandbox.log.reset();
      const response = await stack.gql<WebsiteResult<{ s: { totalCount: number } }>>(
        `{ website(id: "${ids[0]}") { s: stats(name: VISITOR_HOUR, ${RANGE}) { totalCount } } }`,
      );
      expect(firstError(response).extensions?.code).toBe('UNSUPPORTED');
      expect(statsCalls(stack)).toEqual([]);
    } finally {
      await stack.close();
    }
  });
});

const RENAMED_STATS = ['OPERATING_SYSTEM', 'PAGEVIEW', 'SCREEN_RESOLUTION', 'VISITOR'];
const nameOf = (entry: { query: Record<string, string> }): string | undefined => entry.query.name;
/** The statistic names the install refused (422) since the log was last reset. */
const refusedNames = (stack: Stack): (string | undefined)[] =>
  stack.sandbox.log.entries.filter((entry) => entry.path.startsWith('/api/v1/stats/') && entry.status === 422).map(nameOf);
const namesSent = (stack: Stack): (string | undefined)[] =>
  stack.sandbox.log.entries.filter((entry) => entry.path.startsWith('/api/v1/stats/')).map(nameOf);
/** OPERATING_SYSTEM of a website from the `day`th of March: a read of its own. */
const osQuery = (id: string, day: number): string =>
  `{ website(id: "${id}") { s: stats(name: OPERATING_SYSTEM, from: "2026-03-0${day}", to: "2026-03-15") { totalCount } } }`;

describe.each<[Dialect, Dialect]>([
  ['contract', 'legacy'],
  ['legacy', 'contract'],
])('an install switched from %s to %s while the gateway runs', (before, after) => {
  let stack: Stack;
  let mine: string;
  let theirs: string;
  beforeEach(async () => {
    stack = await startStack({ sandbox: { dialect: before } });
    mine = present((await websiteIds(stack, KEY_1))[0], 'a website of KEY_1');
    theirs = present((await websiteIds(stack, KEY_2))[0], 'a website of KEY_2');
    // The gateway learns the names of the install as it was.
    const fields = RENAMED_STATS.map((name) => `${name}: stats(name: ${name}, ${RANGE}) { totalCount }`);
    const learnt = await stack.gql<unknown>(`{ website(id: "${mine}") { ${fields.join(' ')} } }`);
    expect(learnt.errors).toBeUndefined();
    stack.sandbox.setDialect(after);
    stack.sandbox.log.reset();
  });
  afterEach(() => stack.close());

  it('each renamed statistic is learned again with one refused name, then sent right away', async () => {
    expect(stack.sandbox.dialect).toBe(after);
    const fields = RENAMED_STATS.map((name) => `${name}: stats(name: ${name}, ${WHOLE_DEMO}) { totalCount }`).join(' ');
    const first = await stack.gql<WebsiteResult<Record<string, { totalCount: number }>>>(`{ website(id: "${mine}") { ${fields} } }`);
    expect(first.errors).toBeUndefined();
    const website = present(dataOf(first).website, 'website');
    for (const name of RENAMED_STATS) expect(website[name]?.totalCount, name).toBeGreaterThan(0);
    expect(website.VISITOR?.totalCount).toBe(120); // a row per day of the demo
    expect(refusedNames(stack).sort()).toEqual(RENAMED_STATS.map((name) => wireName(before, name)).sort());
    expect(first.extensions?.upstreamCalls).toBe(1 + 2 * RENAMED_STATS.length);

    stack.sandbox.log.reset();
    const later = await stack.gql<unknown>(`{ website(id: "${theirs}") { ${fields} } }`, undefined, KEY_2);
    expect(later.errors).toBeUndefined();
    expect(refusedNames(stack)).toEqual([]);
    expect(namesSent(stack).sort()).toEqual(RENAMED_STATS.map((name) => wireName(after, name)).sort());
  });

  it('concurrent requests across the switch: each refused at most once, the other name read once each', async () => {
    // Two keys and four ranges: reads no cache could share.
    const requests = [1, 2, 3, 4].map((day) =>
      day % 2 === 0 ? stack.gql<unknown>(osQuery(mine, day)) : stack.gql<unknown>(osQuery(theirs, day), undefined, KEY_2),
    );
    for (const answer of await Promise.all(requests)) expect(answer.errors).toBeUndefined();
    // Those already on their way with the old name are refused; none of them tries it again or
    // tries the new name more than once.
    const refused = refusedNames(stack);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(requests.length);
    for (const name of refused) expect(name).toBe(wireName(before, 'OPERATING_SYSTEM'));
    expect(namesSent(stack).filter((name) => name === wireName(after, 'OPERATING_SYSTEM'))).toHaveLength(requests.length);
  });

  it('requests that come while one is learning the name again wait for it: one refused call in all', async () => {
    // The first request's website and old-name reads pass; its read of the other name is held, so the
    // others arrive while it learns (held no longer than this: it only makes the check stronger).
    stack.sandbox.scriptFaults([
      { kind: 'delay', ms: 0 },
      { kind: 'delay', ms: 0 },
      { kind: 'delay', ms: 500 },
    ]);
    const learner = stack.gql<unknown>(osQuery(mine, 1));
    await vi.waitFor(() => expect(namesSent(stack)).toContain(wireName(after, 'OPERATING_SYSTEM')));
    const others = [2, 3, 4].map((day) => stack.gql<unknown>(osQuery(theirs, day), undefined, KEY_2));
    for (const answer of await Promise.all([learner, ...others])) expect(answer.errors).toBeUndefined();
    expect(refusedNames(stack)).toEqual([wireName(before, 'OPERATING_SYSTEM')]);
  });
});
