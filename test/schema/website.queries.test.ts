import { beforeAll, describe, expect, it } from 'vitest';
import {
  FIXED_DASHBOARD,
  KEY_1,
  first,
  dataOf,
  errorsOf,
  firstError,
  restCalls,
  useStack,
  type FixedDashboardData,
  type WebsiteData,
  type PageInfoData,
} from '../fixture.js';

interface IdNode {
  id: string;
}
interface DomainNode {
  domain: string;
}
interface StatNode {
  value: string;
  count: number;
}
interface TotalCount {
  totalCount: number;
}
/** Website as the first test selects it: every scalar field. */
interface WebsiteNode extends WebsiteData {
  createdAt: string | null;
  updatedAt: string | null;
}
interface StatsNodes {
  nodes: StatNode[];
}

const stack = useStack();
let ids: string[];

beforeAll(async () => {
  const response = await stack.gql<{ websites: { nodes: IdNode[] } }>('{ websites(perPage: 100) { nodes { id } } }');
  ids = dataOf(response).websites.nodes.map((node) => node.id);
});

describe('websites', () => {
  it('sends the defaults when no argument is given and returns a page', async () => {
    const response = await stack.gql<{ websites: TotalCount & { nodes: WebsiteNode[]; pageInfo: PageInfoData } }>(`{
      websites { totalCount nodes { id domain privacy passwordProtected emailReports excludeBots excludeParams excludeIps favorite createdAt updatedAt }
        pageInfo { page perPage lastPage hasNextPage hasPreviousPage } } }`);
    expect(response.errors).toBeUndefined();
    const data = dataOf(response);
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites?page=1&per_page=10&sort=desc&sort_by=id']);
    expect(data.websites.totalCount).toBeGreaterThanOrEqual(6);
    expect(data.websites.pageInfo).toEqual({ page: 1, perPage: 10, lastPage: 1, hasNextPage: false, hasPreviousPage: false });
    const site = first(data.websites.nodes);
    expect(site.id).toMatch(/^\d+$/);
    expect(site.domain).toMatch(/\./);
    expect(['PUBLIC', 'PRIVATE', 'PASSWORD']).toContain(site.privacy);
    expect(Array.isArray(site.excludeParams)).toBe(true);
    expect(Date.parse(site.createdAt ?? '')).not.toBeNaN();
    // Newest first by default: ids descending.
    const listed = data.websites.nodes.map((n) => Number(n.id));
    expect(listed).toEqual([...listed].sort((a, b) => b - a));
  });

  it('maps every argument to its REST parameter', async () => {
    const { errors } = await stack.gql<{ websites: TotalCount }>(
      '{ websites(search: "shop", favorite: true, sortBy: DOMAIN, sort: ASC, perPage: 25, page: 2) { totalCount } }',
    );
    expect(errors).toBeUndefined();
    expect(restCalls(stack.sandbox)).toEqual([
      'GET /api/v1/websites?favorite=1&page=2&per_page=25&search=shop&search_by=domain&sort=asc&sort_by=domain',
    ]);
  });

  it('sends favorite=0 for false and leaves out an empty search', async () => {
    await stack.gql<{ websites: TotalCount }>('{ websites(search: "", favorite: false) { totalCount } }');
    expect(restCalls(stack.sandbox)).toEqual(['GET /api/v1/websites?favorite=0&page=1&per_page=10&sort=desc&sort_by=id']);
  });

  it('sorts by domain and filters by search for real', async () => {
    const response = await stack.gql<{ websites: { nodes: DomainNode[] } }>(
      '{ websites(sortBy: DOMAIN, sort: ASC, perPage: 100) { nodes { domain } } }',
    );
    const domains = dataOf(response).websites.nodes.map((n) => n.domain);
    expect(domains).toEqual([...domains].sort());
    const needle = first(domains).slice(0, 4);
    const filtered = await stack.gql<{ websites: { nodes: DomainNode[] } }>(
      'query($s: String) { websites(search: $s, perPage: 100) { nodes { domain } } }',
      { s: needle },
    );
    const nodes = dataOf(filtered).websites.nodes;
    expect(nodes.length).toBeGreaterThan(0);
    for (const node of nodes) expect(node.domain).toContain(needle);
  });

  it('pages past the end give an empty page with correct totals', async () => {
    const response = await stack.gql<{ websites: TotalCount & { nodes: IdNode[]; pageInfo: Omit<PageInfoData, 'perPage'> } }>(
      '{ websites(page: 50) { nodes { id } totalCount pageInfo { page lastPage hasNextPage hasPreviousPage } } }',
    );
    const data = dataOf(response);
    expect(data.websites.nodes).toEqual([]);
    expect(data.websites.totalCount).toBe(ids.length);
    expect(data.websites.pageInfo).toEqual({ page: 50, lastPage: 1, hasNextPage: false, hasPreviousPage: true });
  });

  it('primes website(id) from a list: no second REST call for the same website', async () => {
    const response = await stack.gql<{ websites: { nodes: IdNode[] }; website: DomainNode | null }>(
      `{ websites { nodes { id } } website(id: "${ids[0]}") { domain } }`,
    );
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).website?.domain).toMatch(/\./);
    // Both fields run concurrently, so the by-id read may start before the list primes it; what must
    // hold is that nothing is read twice and a later read in the same request is answered from cache.
    const calls = restCalls(stack.sandbox);
    expect(calls.filter((c) => c.startsWith('GET /api/v1/websites?'))).toHaveLength(1);
    expect(calls.length).toBeLessThanOrEqual(2);
  });
});

describe('website(id)', () => {
  it('reads one website', async () => {
    const response = await stack.gql<{ website: (IdNode & DomainNode) | null }>(`{ website(id: "${ids[0]}") { id domain } }`);
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).website?.id).toBe(ids[0]);
    expect(restCalls(stack.sandbox)).toEqual([`GET /api/v1/websites/${ids[0]}`]);
  });

  it('gives null and a single NOT_FOUND error for an unknown id', async () => {
    const response = await stack.gql<{ website: (DomainNode & { stats: TotalCount }) | null }>(
      `{ website(id: "999999") { domain stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-15") { totalCount } } }`,
    );
    expect(response.data).toEqual({ website: null });
    expect(response.errors).toHaveLength(1);
    const error = firstError(response);
    expect(error.extensions?.code).toBe('NOT_FOUND');
    expect(error.message).toBe('No website with id 999999.');
    expect(error.path).toEqual(['website']);
  });

  it('starts the stats of website(id) together with the website: one round trip', async () => {
    // Long enough that a busy machine's pauses cannot make the calls look serial.
    stack.sandbox.setKnobs({ latencyMs: 300 });
    try {
      const range = 'from: "2026-02-14", to: "2026-03-15"';
      const { errors, extensions } = await stack.gql<{
        website: (DomainNode & Record<'a' | 'b' | 'c' | 'd' | 'e' | 'f', TotalCount>) | null;
      }>(`{ website(id: "${ids[0]}") {
        domain
        a: stats(name: VISITOR, ${range}) { totalCount }
        b: stats(name: COUNTRY, ${range}) { totalCount }
        c: stats(name: BROWSER, ${range}) { totalCount }
        d: stats(name: PAGE, ${range}) { totalCount }
        e: stats(name: REFERRER, ${range}) { totalCount }
        f: stats(name: DEVICE, ${range}) { totalCount } } }`);
      expect(errors).toBeUndefined();
      expect(extensions?.upstreamCalls).toBe(7);
      expect(stack.sandbox.log.count).toBe(7);
      // All seven overlap: the stats did not wait for the website.
      expect(stack.sandbox.log.maxInFlight).toBe(7);
    } finally {
      stack.sandbox.setKnobs({ latencyMs: 0 });
    }
  });

  it('prefetches stats selected through fragments and variables, and skips @skip-ped ones', async () => {
    const { errors } = await stack.gql<{ website: (DomainNode & { stats: TotalCount; hidden?: TotalCount }) | null }>(
      `query($id: ID!, $from: Date!, $name: StatName!, $no: Boolean!) {
        website(id: $id) { ...F ... on Website { hidden: stats(name: CITY, from: $from, to: "2026-03-15") @skip(if: $no) { totalCount } } }
      }
      fragment F on Website { domain stats(name: $name, from: $from, to: "2026-03-15", perPage: 25) { totalCount } }`,
      { id: ids[0], from: '2026-03-01', name: 'LANGUAGE', no: true },
    );
    expect(errors).toBeUndefined();
    expect(restCalls(stack.sandbox).sort()).toEqual([
      `GET /api/v1/stats/${ids[0]}?from=2026-03-01&name=language&page=1&per_page=25&sort=desc&sort_by=count&to=2026-03-15`,
      `GET /api/v1/websites/${ids[0]}`,
    ]);
  });
  it("looks ahead with each request's variables when the same document comes again", async () => {
    const document = `query($id: ID!, $from: Date!) { website(id: $id) {
      byVariable: stats(name: PAGE, from: $from, to: "2026-03-15") { totalCount }
      literal: stats(name: DEVICE, from: "2026-03-10", to: "2026-03-15") { totalCount } } }`;
    const statCalls = () =>
      restCalls(stack.sandbox)
        .filter((call) => call.includes('/stats/'))
        .sort();
    for (const from of ['2026-03-01', '2026-03-05', '2026-03-01']) {
      stack.sandbox.log.reset();
      const response = await stack.gql<{ website: Record<'byVariable' | 'literal', TotalCount> }>(document, { id: ids[0], from });
      expect(response.errors).toBeUndefined();
      expect(statCalls()).toEqual([
        `GET /api/v1/stats/${ids[0]}?from=${from}&name=page&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-15`,
        `GET /api/v1/stats/${ids[0]}?from=2026-03-10&name=device&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-15`,
      ]);
      expect(response.extensions?.upstreamCalls).toBe(3);
    }
  });
});

describe('stats', () => {
  it('maps every argument to its REST parameter', async () => {
    const response = await stack.gql<{
      stats: StatsNodes & TotalCount;
    }>(`{ stats(websiteId: "${ids[0]}", name: OPERATING_SYSTEM, from: "2026-01-01",
      to: "2026-03-15", search: "win", sortBy: VALUE, sort: ASC, perPage: 50, page: 1) { nodes { value count } totalCount } }`);
    expect(response.errors).toBeUndefined();
    // The website is read too: its statistics are answered only to a key that owns it.
    expect(restCalls(stack.sandbox).sort()).toEqual([
      `GET /api/v1/stats/${ids[0]}?from=2026-01-01&name=operating_system&page=1&per_page=50&search=win&search_by=value&sort=asc&sort_by=value&to=2026-03-15`,
      `GET /api/v1/websites/${ids[0]}`,
    ]);
    for (const node of dataOf(response).stats.nodes) expect(node.value.toLowerCase()).toContain('win');
  });

  it('sends every stat name in snake_case', async () => {
    const names = [
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
    ] as const;
    const fields = names.map(
      (name) => `${name}: stats(websiteId: "${ids[0]}", name: ${name}, from: "2026-03-01", to: "2026-03-15") { totalCount }`,
    );
    const response = await stack.gql<Record<(typeof names)[number], TotalCount>>(`{ ${fields.join('\n')} }`);
    expect(response.errors).toBeUndefined();
    const sent = stack.sandbox.log.entries.flatMap((e) => (e.query.name === undefined ? [] : [e.query.name])).sort();
    expect(sent).toEqual(names.map((n) => n.toLowerCase()).sort());
    expect(dataOf(response).VISITOR.totalCount).toBe(15); // one row per day, 1 to 15 March
  });

  it('returns visitor rows as days with integer counts, sorted as asked', async () => {
    const response = await stack.gql<{
      stats: StatsNodes;
    }>(`{ stats(websiteId: "${ids[0]}", name: VISITOR, from: "2026-03-01", to: "2026-03-07", sortBy: VALUE, sort: ASC) {
      nodes { value count } } }`);
    const data = dataOf(response);
    expect(data.stats.nodes.map((n) => n.value)).toEqual([
      '2026-03-01',
      '2026-03-02',
      '2026-03-03',
      '2026-03-04',
      '2026-03-05',
      '2026-03-06',
      '2026-03-07',
    ]);
    for (const node of data.stats.nodes) expect(Number.isInteger(node.count)).toBe(true);
  });

  it('Website.stats uses the parent id, and the same stats asked three times cost one call', async () => {
    const stat = 'stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-15") { nodes { value count } }';
    const response = await stack.gql<{ a: { x: StatsNodes; y: StatsNodes } | null; b: DomainNode | null; c: StatsNodes }>(`{
      a: website(id: "${ids[1]}") { x: ${stat} y: ${stat} }
      b: website(id: "${ids[1]}") { domain }
      c: stats(websiteId: "${ids[1]}", name: COUNTRY, from: "2026-03-01", to: "2026-03-15") { nodes { value count } } }`);
    expect(response.errors).toBeUndefined();
    const data = dataOf(response);
    expect(data.a?.x).toEqual(data.c);
    expect(data.a?.y).toEqual(data.c);
    expect(restCalls(stack.sandbox).sort()).toEqual([
      `GET /api/v1/stats/${ids[1]}?from=2026-03-01&name=country&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-15`,
      `GET /api/v1/websites/${ids[1]}`,
    ]);
    expect(response.extensions?.upstreamCalls).toBe(2);
  });

  it('a list of websites with their stats reads each once', async () => {
    const response = await stack.gql<{ websites: { nodes: (IdNode & { stats: TotalCount })[] } }>(`{ websites(perPage: 25) { nodes { id
      stats(name: VISITOR, from: "2026-02-14", to: "2026-03-15", perPage: 50) { totalCount } } } }`);
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).websites.nodes.length).toBe(ids.length);
    expect(stack.sandbox.log.count).toBe(1 + ids.length);
  });

  it('keeps concurrency under the per-request limit', async () => {
    stack.sandbox.setKnobs({ latencyMs: 30 });
    try {
      const fields = Array.from(
        { length: 12 },
        (_, i) => `s${i}: stats(websiteId: "${ids[0]}", name: PAGE, from: "2026-03-01", to: "2026-03-15", page: ${i + 1}) { totalCount }`,
      );
      const { errors } = await stack.gql<Record<string, TotalCount>>(`{ ${fields.join('\n')} }`);
      expect(errors).toBeUndefined();
      expect(stack.sandbox.log.count).toBe(13); // 12 pages and the website, read once
      expect(stack.sandbox.log.maxInFlight).toBe(8);
    } finally {
      stack.sandbox.setKnobs({ latencyMs: 0 });
    }
  });
});

describe('key forwarding', () => {
  it('forwards the Authorization header unchanged and nothing else of the caller', async () => {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${KEY_1}`,
        cookie: 'session=secret',
        'x-forwarded-for': '10.1.2.3',
        'x-custom': 'nope',
      },
      body: JSON.stringify({ query: `{ website(id: "${ids[0]}") { id } }` }),
    });
    expect(response.status).toBe(200);
    const entry = first(stack.sandbox.log.entries);
    expect(entry.headers.authorization).toBe(`Bearer ${KEY_1}`);
    expect(entry.headers.accept).toBe('application/json');
    expect(entry.headers.cookie).toBeUndefined();
    expect(entry.headers['x-forwarded-for']).toBeUndefined();
    expect(entry.headers['x-custom']).toBeUndefined();
  });
});

describe('refused arguments', () => {
  it.each([
    [
      'perPage 7',
      `{ stats(websiteId: "1", name: PAGE, from: "2026-03-01", to: "2026-03-02", perPage: 7) { totalCount } }`,
      'stats',
      'perPage',
      'perPage must be one of 10, 25, 50, 100, got 7.',
    ],
    ['page 0', '{ websites(page: 0) { totalCount } }', 'websites', 'page', 'page must be an integer from 1 to 1000000, got 0.'],
    ['a malformed id', '{ website(id: "1 OR 1=1") { domain } }', 'website', 'id', 'id must be a positive integer id, got "1 OR 1=1".'],
    [
      'to before from',
      `{ stats(websiteId: "1", name: PAGE, from: "2026-03-02", to: "2026-03-01") { totalCount } }`,
      'stats',
      'to',
      'to (2026-03-01) must be on or after from (2026-03-02).',
    ],
    [
      'a long search',
      `{ websites(search: "${'x'.repeat(300)}") { totalCount } }`,
      'websites',
      'search',
      'search must be at most 255 characters, got 300.',
    ],
  ])(
    '%s: BAD_USER_INPUT naming the field, the argument and the value, no upstream call',
    async (_name, query, field, argument, message) => {
      const response = await stack.gql<Record<string, unknown>>(query);
      expect(response.data ?? null).toBeNull();
      expect(response.errors).toHaveLength(1);
      const error = firstError(response);
      expect(error.message).toBe(`${field}: ${message}`);
      expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument, field });
      expect(response.extensions).toMatchObject({ upstreamCalls: 0 });
      expect(stack.sandbox.log.count).toBe(0);
    },
  );

  it('one bad perPage in a dashboard refuses it whole: no website, no statistic, no upstream call', async () => {
    const dashboard = FIXED_DASHBOARD.replace('perPage: 25', 'perPage: 7');
    expect(dashboard).not.toBe(FIXED_DASHBOARD);
    const response = await stack.gql<FixedDashboardData>(dashboard);
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.map((error) => [error.message, error.extensions?.field])).toEqual([
      ['website.browsers: perPage must be one of 10, 25, 50, 100, got 7.', 'website.browsers'],
    ]);
    expect(response.extensions).toMatchObject({ upstreamCalls: 0 });
    expect(stack.sandbox.log.count).toBe(0);
    // The same dashboard, valid, is answered whole.
    expect(dataOf(await stack.gql<FixedDashboardData>(FIXED_DASHBOARD)).website?.browsers.nodes.length).toBeGreaterThan(0);
  });

  it('to before from inside a website: refused before the website is read', async () => {
    const response = await stack.gql<{ website: unknown }>(
      'query($to: Date) { website(id: "1") { id domain pages: stats(name: PAGE, from: "2026-03-02", to: $to) { totalCount } } }',
      { to: '2026-03-01' },
    );
    expect(response.data ?? null).toBeNull();
    expect(firstError(response).message).toBe('website.pages: to (2026-03-01) must be on or after from (2026-03-02).');
    expect(response.extensions).toMatchObject({ upstreamCalls: 0 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('an impossible date is refused by the Date scalar, with no upstream call', async () => {
    const { errors } = await stack.gql<{ stats: TotalCount }>(
      `{ stats(websiteId: "1", name: PAGE, from: "2026-02-30", to: "2026-03-01") { totalCount } }`,
    );
    // Written in the document: the argument, the value and where it is.
    expect(errors).toEqual([
      {
        message: 'Argument "from" of Query.stats must be a real calendar date written YYYY-MM-DD, got "2026-02-30".',
        locations: [{ line: 1, column: 43 }],
        extensions: { code: 'BAD_USER_INPUT', argument: 'from' },
      },
    ]);
    expect(stack.sandbox.log.count).toBe(0);
    const inWebsite = await stack.gql<{ website: { stats: TotalCount } | null }>(
      '{ website(id: "1") { stats(name: PAGE, from: "2026-11-01", to: "2026-11-31") { totalCount } } }',
    );
    expect(errorsOf(inWebsite).map((e) => e.message)).toEqual([
      'Argument "to" of Website.stats must be a real calendar date written YYYY-MM-DD, got "2026-11-31".',
    ]);
    const viaVariable = await stack.gql<{ stats: TotalCount }>(
      'query($d: Date!) { stats(websiteId: "1", name: PAGE, from: $d, to: "2026-03-01") { totalCount } }',
      { d: '2026-13-01' },
    );
    expect(firstError(viaVariable).message).toContain('real calendar date');
    expect(stack.sandbox.log.count).toBe(0);
  });
});
