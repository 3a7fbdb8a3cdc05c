// One GraphQL API over installs of different versions: every suite here runs against both dialects
// of the sandbox, the published contract (CONTRACT.md parts A/B) and the older install (part C).
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CREATE_WEBSITE, DELETE_WEBSITE, KEY_1, KEY_2, UPDATE_WEBSITE, WEBSITE_FIELDS, restCalls, startStack, type Stack } from '../fixture.js';

type Dialect = 'contract' | 'legacy';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const README_DASHBOARD = /```graphql\n(query Dashboard[\s\S]*?)```/.exec(readme)![1]!;
const README_LIST = /```graphql\n(\{\s*websites[\s\S]*?)```/.exec(readme)![1]!;

const RANGE = 'from: "2026-03-01", to: "2026-03-15"';
const WHOLE_DEMO = 'from: "2025-11-16", to: "2026-03-15"';
const CONTRACT_STATS = [
  'BROWSER', 'CAMPAIGN', 'CITY', 'CONTINENT', 'COUNTRY', 'DEVICE', 'EVENT', 'LANGUAGE',
  'OPERATING_SYSTEM', 'PAGE', 'PAGEVIEW', 'REFERRER', 'SCREEN_RESOLUTION', 'VISITOR',
];
const LEGACY_ONLY_STATS = ['LANDING_PAGE', 'VISITOR_HOUR', 'PAGEVIEW_HOUR'];

/** What each dialect calls a statistic on the wire (CONTRACT.md part C), written out independently. */
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
  const { data } = await stack.gql('{ websites(perPage: 100) { nodes { id } } }', {}, key);
  return data.websites.nodes.map((node: { id: string }) => node.id);
}

const statsCalls = (stack: Stack): string[] => restCalls(stack.sandbox).filter((call) => call.startsWith('GET /api/v1/stats/'));

describe.each<Dialect>(['contract', 'legacy'])('against the %s dialect', (dialect) => {
  let stack: Stack;
  let mine: string[];
  let theirs: string[];
  beforeAll(async () => {
    stack = await startStack({ sandbox: { dialect } });
    mine = await websiteIds(stack, KEY_1);
    theirs = await websiteIds(stack, KEY_2);
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    stack.sandbox.log.reset();
    stack.sandbox.setKnobs({ rateLimit: null });
  });

  describe('the README', () => {
    it('dashboard answers the website and every statistic with rows', async () => {
      const { data, errors } = await stack.gql(README_DASHBOARD);
      expect(errors).toBeUndefined();
      expect(data.website.domain).toMatch(/\./);
      for (const alias of ['visitors', 'pages', 'countries', 'browsers', 'referrers']) {
        expect(data.website[alias].nodes.length, alias).toBeGreaterThan(0);
      }
      for (const row of data.website.visitors.nodes) expect(row.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    });

    it('list answers every website with its sparkline, favorite null where the install has none', async () => {
      const { data, errors } = await stack.gql(README_LIST);
      expect(errors).toBeUndefined();
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
      const fields = CONTRACT_STATS.map((name) => `${name}: stats(name: ${name}, ${WHOLE_DEMO}, perPage: 100) { totalCount nodes { value count } }`);
      // The demo's oldest website has traffic of every kind (campaigns included).
      const oldest = mine[mine.length - 1];
      const { data, errors } = await stack.gql(`{ website(id: "${oldest}") { ${fields.join('\n')} } }`);
      expect(errors).toBeUndefined();
      for (const name of CONTRACT_STATS) expect(data.website[name].totalCount, name).toBeGreaterThan(0);
      expect(data.website.VISITOR.totalCount).toBe(120); // a row per day
      const sent = new Set(stack.sandbox.log.entries.filter((e) => e.status === 200).map((e) => e.query.name));
      for (const name of CONTRACT_STATS) expect(sent, name).toContain(wireName(dialect, name));
    });

    it.each(LEGACY_ONLY_STATS)('%s: rows on the older install, UNSUPPORTED naming it on the contract', async (name) => {
      const query = `{ website(id: "${mine[0]}") { domain s: stats(name: ${name}, ${RANGE}, perPage: 25) { nodes { value count } } } }`;
      const { data, errors } = await stack.gql(query);
      if (dialect === 'legacy') {
        expect(errors).toBeUndefined();
        expect(data.website.s.nodes.length).toBeGreaterThan(0);
        if (name !== 'LANDING_PAGE') for (const row of data.website.s.nodes) expect(row.value).toMatch(/^([01]\d|2[0-3])$/);
        else for (const row of data.website.s.nodes) expect(row.value).toMatch(/^\//);
      } else {
        expect(errors).toHaveLength(1);
        expect(errors![0]!.extensions).toMatchObject({ code: 'UNSUPPORTED' });
        expect(errors![0]!.message).toContain(name);
        expect(errors![0]!.path).toEqual(['website', 's']);
        // Remembered: asked again, it costs no upstream call.
        stack.sandbox.log.reset();
        const again = await stack.gql(`{ stats(websiteId: "${mine[0]}", name: ${name}, ${RANGE}) { totalCount } }`);
        expect(again.errors![0]!.extensions).toMatchObject({ code: 'UNSUPPORTED' });
        expect(statsCalls(stack)).toEqual([]);
      }
    });

    it('reads every page of a statistic through whichever envelope the install sends', async () => {
      const first = await stack.gql(`{ stats(websiteId: "${mine[0]}", name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC) {
        nodes { value } totalCount pageInfo { page perPage lastPage hasNextPage hasPreviousPage } } }`);
      expect(first.errors).toBeUndefined();
      expect(first.data.stats.totalCount).toBe(15);
      expect(first.data.stats.pageInfo).toEqual({ page: 1, perPage: 10, lastPage: 2, hasNextPage: true, hasPreviousPage: false });
      const second = await stack.gql(`{ stats(websiteId: "${mine[0]}", name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC, page: 2) {
        nodes { value } pageInfo { page lastPage hasNextPage hasPreviousPage } } }`);
      expect(second.data.stats.nodes.map((n: { value: string }) => n.value)).toEqual([
        '2026-03-11', '2026-03-12', '2026-03-13', '2026-03-14', '2026-03-15',
      ]);
      expect(second.data.stats.pageInfo).toEqual({ page: 2, lastPage: 2, hasNextPage: false, hasPreviousPage: true });
    });
  });

  describe('another user\'s website', () => {
    it('website: null with NOT_FOUND, and none of its statistics in the answer', async () => {
      const response = await stack.gql(`{ website(id: "${theirs[0]}") { domain stats(name: COUNTRY, ${RANGE}) { nodes { value count } } } }`);
      expect(response.data).toEqual({ website: null });
      expect(response.errors!.map((e) => e.extensions!.code)).toEqual(['NOT_FOUND']);
      expect(JSON.stringify(response)).not.toMatch(/"count"|"value"/);
    });

    it('Query.stats: NOT_FOUND and no statistic rows, whatever the install would serve', async () => {
      const response = await stack.gql(`{ stats(websiteId: "${theirs[0]}", name: COUNTRY, ${RANGE}) { nodes { value count } totalCount } }`);
      expect(response.data).toBeNull();
      expect(response.errors!.map((e) => e.extensions!.code)).toEqual(['NOT_FOUND']);
      expect(JSON.stringify(response)).not.toMatch(/"count"|"value"|"totalCount"/);
      expect(restCalls(stack.sandbox)).toContain(`GET /api/v1/websites/${theirs[0]}`);
    });

    it('an unknown id: the same NOT_FOUND', async () => {
      const response = await stack.gql(`{ stats(websiteId: "999999", name: COUNTRY, ${RANGE}) { totalCount } }`);
      expect(response.errors!.map((e) => e.extensions!.code)).toEqual(['NOT_FOUND']);
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
      const created = await stack.gql(CREATE_WEBSITE, { input });
      expect(created.errors).toBeUndefined();
      expect(created.data.createWebsite.userErrors).toEqual([]);
      const website = created.data.createWebsite.website;
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

      const read = await stack.gql(`{ website(id: "${website.id}") { ${WEBSITE_FIELDS} } }`);
      expect(read.data.website).toEqual(website);

      const update = {
        privacy: 'PRIVATE',
        emailReports: false,
        excludeBots: true,
        excludeParams: ['ref'],
        excludeIps: [],
      };
      const updated = await stack.gql(UPDATE_WEBSITE, { id: website.id, input: update });
      expect(updated.errors).toBeUndefined();
      expect(updated.data.updateWebsite.userErrors).toEqual([]);
      expect(updated.data.updateWebsite.website).toMatchObject({
        privacy: 'PRIVATE',
        emailReports: false,
        excludeBots: true,
        excludeIps: [],
        excludeParams: dialect === 'legacy' ? null : ['ref'],
      });
      const reread = await stack.gql(`{ website(id: "${website.id}") { ${WEBSITE_FIELDS} } }`);
      expect(reread.data.website).toEqual(updated.data.updateWebsite.website);

      const deleted = await stack.gql(DELETE_WEBSITE, { id: website.id });
      expect(deleted.data.deleteWebsite).toEqual({ deletedId: website.id, userErrors: [] });
      const gone = await stack.gql(`{ website(id: "${website.id}") { id } }`);
      expect(gone.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    });

    it('a create with only a domain answers the website with the install\'s defaults, in one call', async () => {
      const { data, errors } = await stack.gql(CREATE_WEBSITE, { input: { domain: `only-domain-${dialect}.example.com` } });
      expect(errors).toBeUndefined();
      expect(data.createWebsite.userErrors).toEqual([]);
      expect(data.createWebsite.website).toMatchObject({ privacy: 'PUBLIC', emailReports: false, passwordProtected: false });
      expect(restCalls(stack.sandbox).filter((call) => call.startsWith('GET'))).toEqual([]);
    });

    it('an update of an unknown or foreign id: NOT_FOUND in userErrors, whichever 404 body the install sends', async () => {
      for (const id of [theirs[0], '999999']) {
        const { data } = await stack.gql(UPDATE_WEBSITE, { id, input: { emailReports: true } });
        expect(data.updateWebsite.website).toBeNull();
        expect(data.updateWebsite.userErrors).toEqual([{ field: ['id'], message: `No website with id ${id}.`, code: 'NOT_FOUND' }]);
      }
    });

    it.each(['malformed', 'truncated', 'reset'] as const)(
      'a create whose 2xx answer is %s: the website is read back once and answered',
      async (answer) => {
        const domain = `unreadable-${answer}-${dialect}.example.com`;
        stack.sandbox.scriptFaults([{ kind: 'afterHandling', answer }]);
        const { data, errors } = await stack.gql(CREATE_WEBSITE, { input: { domain, emailReports: true } });
        expect(errors).toBeUndefined();
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
      const { data, errors } = await stack.gql(UPDATE_WEBSITE, { id: mine[1], input: { excludeIps: ['192.0.2.7'] } });
      expect(errors).toBeUndefined();
      expect(data.updateWebsite).toMatchObject({ website: { id: mine[1], excludeIps: ['192.0.2.7'] }, userErrors: [] });
      expect(restCalls(stack.sandbox)).toEqual([`PATCH /api/v1/websites/${mine[1]}`, `GET /api/v1/websites/${mine[1]}`]);
    });
  });

  describe('favorites', () => {
    it('websites(favorite: true): filtered on an install with favorites, UNSUPPORTED on one without', async () => {
      const { data, errors } = await stack.gql('{ websites(favorite: true, perPage: 100) { nodes { id favorite } } }');
      if (dialect === 'legacy') {
        expect(data).toBeNull();
        expect(errors).toHaveLength(1);
        expect(errors![0]!.extensions).toMatchObject({ code: 'UNSUPPORTED', argument: 'favorite' });
      } else {
        expect(errors).toBeUndefined();
        for (const node of data.websites.nodes) expect(node.favorite).toBe(true);
      }
    });

    it('an update with favorite: UNSUPPORTED in userErrors where it was ignored, the other fields applied', async () => {
      const { data, errors } = await stack.gql(UPDATE_WEBSITE, { id: mine[2], input: { favorite: true, emailReports: true } });
      expect(errors).toBeUndefined();
      expect(data.updateWebsite.website).toMatchObject({ id: mine[2], emailReports: true });
      if (dialect === 'legacy') {
        expect(data.updateWebsite.website.favorite).toBeNull();
        expect(data.updateWebsite.userErrors).toEqual([
          { field: ['input', 'favorite'], message: expect.stringContaining('favorites') as string, code: 'UNSUPPORTED' },
        ]);
      } else {
        expect(data.updateWebsite.website.favorite).toBe(true);
        expect(data.updateWebsite.userErrors).toEqual([]);
      }
    });
  });

  describe('the install\'s rate limit', () => {
    it('extensions.rateLimit says what the install said of the key\'s limit in its latest answer', async () => {
      stack.sandbox.setKnobs({ rateLimit: { limit: 60, windowMs: 60_000 } });
      const first = await stack.gql(`{ website(id: "${mine[0]}") { domain } }`);
      expect(first.extensions!.rateLimit).toEqual({ limit: 60, remaining: 59 });
      const second = await stack.gql(`{ website(id: "${mine[0]}") { domain } }`);
      expect(second.extensions!.rateLimit).toEqual({ limit: 60, remaining: 58 });
    });

    it('no rateLimit when the install sends no such headers', async () => {
      const response = await stack.gql(`{ website(id: "${mine[0]}") { domain } }`);
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
    const first = await stack.gql(query);
    expect(first.errors).toBeUndefined();
    const firstNames = statsCalls(stack).map((call) => new URLSearchParams(call.split('?')[1]).get('name')).sort();
    expect(firstNames).toEqual(dialect === 'legacy' ? ['country', 'visitor', 'visitors'] : ['country', 'visitor']);
    expect(first.extensions!.upstreamCalls).toBe(dialect === 'legacy' ? 4 : 3);

    // Another key, another request: the install's names are known for the life of the process.
    stack.sandbox.log.reset();
    const later = await stack.gql(query.replace(ids[0]!, (await websiteIds(stack, KEY_2))[0]!), undefined, KEY_2);
    expect(later.errors).toBeUndefined();
    const laterNames = statsCalls(stack).map((call) => new URLSearchParams(call.split('?')[1]).get('name')).sort();
    expect(laterNames).toEqual(['country', wireName(dialect, 'VISITOR')]);
    expect(later.extensions!.upstreamCalls).toBe(3);
  });

  it('concurrent first requests refuse at most one name between them', async () => {
    const ids = await websiteIds(stack, KEY_1);
    stack.sandbox.log.reset();
    const query = `{ website(id: "${ids[0]}") { s: stats(name: OPERATING_SYSTEM, ${RANGE}) { totalCount } } }`;
    const answers = await Promise.all(Array.from({ length: 5 }, () => stack.gql(query)));
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
      const { errors } = await stack.gql(`{ stats(websiteId: "${ids[0]}", name: SCREEN_RESOLUTION, ${RANGE}) { totalCount } }`);
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
      const { errors } = await stack.gql(`{ website(id: "${ids[0]}") { s: stats(name: VISITOR_HOUR, ${RANGE}) { totalCount } } }`);
      expect(errors![0]!.extensions!.code).toBe('UNSUPPORTED');
      expect(statsCalls(stack)).toEqual([]);
    } finally {
      await stack.close();
    }
  });
});
