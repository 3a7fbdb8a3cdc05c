// The 'legacy' dialect: the sandbox playing the older install of docs/CONTRACT.md part C, over real
// HTTP, point by point; and the contract dialect refusing what only the older install has.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Dialect, Sandbox } from '../../src/sandbox/index.js';
import { LEGACY_STAT_NAMES } from '../../src/sandbox/dialect.js';
import { pageWindow } from '../../src/sandbox/pagination.js';
import { apportion } from '../../src/sandbox/demo-traffic.js';
import { KEY_1, KEY_2, TODAY, call, statsPath } from './http.js';
import type { ErrorBody, LegacyWireWebsite, StatRow, WirePage, WirePlainPage } from './http.js';

const WINDOW_START = '2023-03-12'; // TODAY - 1099 days: the seeded window is the 1100 days ending today
const RECENT_START = '2025-11-16'; // TODAY - 119 days: the days whose figures did not change when the window grew from 120
let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY, dialect: 'legacy' });
});
afterEach(async () => {
  await sandbox.close();
});

type StatPage = WirePlainPage<StatRow>;
type One = { data: LegacyWireWebsite; status: number };
const stats = (id: number, name: string, from = WINDOW_START, to = TODAY, extra: Record<string, string> = {}, key?: string) =>
  call<StatPage>(sandbox, statsPath(id, name, from, to, extra), { key });
const list = (query = '', key?: string) => call<WirePage<LegacyWireWebsite>>(sandbox, `/api/v1/websites${query}`, { key });
const show = (id: number | string) => call<One>(sandbox, `/api/v1/websites/${id}`);
const store = (form: Record<string, string>) => call<One>(sandbox, '/api/v1/websites', { method: 'POST', form });
const update = (id: number | string, form: Record<string, string>, method = 'PATCH', key?: string) =>
  call<One>(sandbox, `/api/v1/websites/${id}`, { method, form, key });

/** Every row of a statistic over the range, through the pages, in either dialect's envelope. */
async function allRows(target: Sandbox, id: number, name: string, from = WINDOW_START, to = TODAY): Promise<StatRow[]> {
  const rows: StatRow[] = [];
  for (let page = 1; ; page++) {
    const query = { per_page: '100', page: String(page), sort_by: 'value', sort: 'asc' };
    const reply = await call<StatPage | WirePage<StatRow>>(target, statsPath(id, name, from, to, query));
    expect(reply.status, `${name} page ${page}`).toBe(200);
    rows.push(...reply.body.data);
    if (page >= ('meta' in reply.body ? reply.body.meta.last_page : reply.body.last_page)) return rows;
  }
}
const total = (rows: StatRow[]): number => rows.reduce((sum, row) => sum + row.count, 0);
const NAME_INVALID = { message: { name: ['The selected name is invalid.'] }, status: 422 };
const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const MODEL_NOT_FOUND = { message: 'No query results for model [App\\Models\\Website].' };
const SERVER_ERROR = { message: 'Server Error' };
const HOURS = Array.from({ length: 24 }, (_, hour) => String(hour).padStart(2, '0'));

describe('the dialect setting', () => {
  it('is exposed on the sandbox, and contract is the default', async () => {
    expect(sandbox.dialect).toBe('legacy');
    const plain = await startSandbox({ port: 0 });
    try {
      expect(plain.dialect).toBe('contract');
    } finally {
      await plain.close();
    }
  });

  it('rejects an unknown dialect from code', async () => {
    await expect(startSandbox({ dialect: 'modern' as Dialect })).rejects.toThrow(/dialect/);
  });
});

describe('stat names', () => {
  it.each([
    ['browser', /^[A-Z][\w ]+$/, 'Chrome'],
    ['campaign', /^[a-z_0-9]+$/, 'spring_launch'],
    ['city', /^[A-Z]{2}:\S.*$/, 'US:New York, NY'],
    ['continent', /^[A-Z]{2}:[A-Z][\w ]+$/, 'EU:Europe'],
    ['country', /^[A-Z]{2}:[A-Z][\w ]+$/, 'US:United States'],
    ['device', /^[A-Z][a-z]+$/, 'Mobile'],
    ['event', /^[a-z_]+:[^:]*:[^:]*$/, 'signup::'],
    ['landing_page', /^\/\S*$/, '/'],
    ['language', /^[a-z]{2}$/, 'en'],
    ['os', /^[A-Za-z][\w .]+$/, 'Windows'],
    ['page', /^\/\S*$/, '/pricing?plan=pro'],
    ['pageviews', /^\d{4}-\d{2}-\d{2}$/, TODAY],
    ['pageviews_hours', /^([01]\d|2[0-3])$/, '00'],
    ['referrer', /^[a-z0-9.-]+\.[a-z]{2,}$/, 'google.com'],
    ['resolution', /^\d+x\d+$/, '1920x1080'],
    ['visitors', /^\d{4}-\d{2}-\d{2}$/, WINDOW_START],
    ['visitors_hours', /^([01]\d|2[0-3])$/, '23'],
  ])('%s answers rows like %s', async (name, pattern, example) => {
    const rows = await allRows(sandbox, 1, name);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.value).toMatch(pattern);
      expect(Number.isInteger(row.count) && row.count > 0).toBe(true);
    }
    expect(rows.map((row) => row.value)).toContain(example);
  });

  it('lists exactly the 17 names tested above', () => {
    expect([...LEGACY_STAT_NAMES].sort()).toEqual([
      'browser',
      'campaign',
      'city',
      'continent',
      'country',
      'device',
      'event',
      'landing_page',
      'language',
      'os',
      'page',
      'pageviews',
      'pageviews_hours',
      'referrer',
      'resolution',
      'visitors',
      'visitors_hours',
    ]);
  });

  it.each(['operating_system', 'pageview', 'screen_resolution', 'visitor', 'bounce', 'Visitors', 'hours'])(
    '%s is a 422 on name',
    async (name) => {
      const reply = await stats(1, name);
      expect(reply.status).toBe(422);
      expect(reply.body).toEqual(NAME_INVALID);
    },
  );

  it('serves under the four renamed names the same data the contract dialect serves under its names', async () => {
    const contract = await startSandbox({ port: 0, today: TODAY });
    try {
      for (const [legacy, current] of [
        ['os', 'operating_system'],
        ['pageviews', 'pageview'],
        ['resolution', 'screen_resolution'],
        ['visitors', 'visitor'],
      ] as const) {
        expect(await allRows(sandbox, 5, legacy), legacy).toEqual(await allRows(contract, 5, current));
      }
      // And adding the older install's statistics changed none of the others.
      expect(await allRows(sandbox, 5, 'country')).toEqual(await allRows(contract, 5, 'country'));
    } finally {
      await contract.close();
    }
  });

  it('has every hour of the day, whose counts add up to the day’s visitors and pageviews', async () => {
    for (const [hours, daily] of [
      ['visitors_hours', 'visitors'],
      ['pageviews_hours', 'pageviews'],
    ]) {
      const day = await allRows(sandbox, 7, hours as string, '2026-03-10', '2026-03-10');
      expect(day.map((row) => row.value)).toEqual(HOURS);
      expect(total(day)).toBe(total(await allRows(sandbox, 7, daily as string, '2026-03-10', '2026-03-10')));
      // Over a range, each hour is summed over its days.
      const range = await allRows(sandbox, 7, hours as string, '2026-02-01', '2026-02-28');
      expect(total(range)).toBe(total(await allRows(sandbox, 7, daily as string, '2026-02-01', '2026-02-28')));
    }
    // A daily rhythm: the busiest hour sees several times the quietest one.
    const counts = (await allRows(sandbox, 1, 'visitors_hours')).map((row) => row.count);
    expect(Math.max(...counts)).toBeGreaterThan(Math.min(...counts) * 3);
  });

  it('has landing pages among the pages, never entered more often than viewed', async () => {
    for (const id of [1, 5, 10]) {
      const pages = new Map((await allRows(sandbox, id, 'page')).map((row) => [row.value, row.count]));
      const landings = await allRows(sandbox, id, 'landing_page');
      expect(landings.length).toBeGreaterThan(0);
      for (const row of landings) expect(row.count).toBeLessThanOrEqual(pages.get(row.value) ?? -1);
      const visitors = total(await allRows(sandbox, id, 'visitors'));
      expect(total(landings)).toBeGreaterThan(visitors * 0.5);
      expect(total(landings)).toBeLessThan(visitors * 1.1);
    }
    const top = await stats(1, 'landing_page');
    expect(top.body.data[0]?.value).toBe('/');
  });

  it('has the older install’s three statistics a year back too, adding up as in the recent days', async () => {
    for (const [from, to] of [
      ['2025-02-15', '2025-03-15'],
      ['2026-02-15', TODAY],
    ]) {
      for (const name of ['landing_page', 'visitors_hours', 'pageviews_hours'])
        expect((await stats(1, name, from, to)).body.total, `${name} ${from}`).toBeGreaterThan(0);
      expect(total(await allRows(sandbox, 1, 'visitors_hours', from, to))).toBe(total(await allRows(sandbox, 1, 'visitors', from, to)));
      expect(total(await allRows(sandbox, 1, 'pageviews_hours', from, to))).toBe(total(await allRows(sandbox, 1, 'pageviews', from, to)));
      const pages = new Map((await allRows(sandbox, 1, 'page', from, to)).map((row) => [row.value, row.count]));
      for (const row of await allRows(sandbox, 1, 'landing_page', from, to))
        expect(row.count).toBeLessThanOrEqual(pages.get(row.value) ?? -1);
    }
  });

  it('has nothing before a website was created, not even in the hours of its creation day before it', async () => {
    // tailspin-travel.com (7) was created 350 days before TODAY, at 11:54:10 UTC.
    const created = (await show(7)).body.data.created_at;
    expect(created).toBe('2025-03-30T11:54:10.000000Z');
    for (const name of LEGACY_STAT_NAMES) expect((await stats(7, name, WINDOW_START, '2025-03-29')).body.total, name).toBe(0);
    for (const [hours, daily] of [
      ['visitors_hours', 'visitors'],
      ['pageviews_hours', 'pageviews'],
    ]) {
      const day = await allRows(sandbox, 7, hours as string, '2025-03-30', '2025-03-30');
      expect(day.length, hours).toBeGreaterThan(0);
      for (const row of day) expect(row.value >= '11', `${hours} ${row.value}`).toBe(true);
      expect(total(day)).toBe(total(await allRows(sandbox, 7, daily as string, '2025-03-30', '2025-03-30')));
    }
  });

  it('keeps the figures of the 120 days ending today that it had when its window was 120 days long', async () => {
    // Taken from the sandbox before the window grew to 400 days. Site 7 has 25 pages: one page of 100 holds every row.
    const figures = async (name: string, from: string, to: string) => {
      const rows = (await stats(7, name, from, to, { per_page: '100' })).body.data;
      return [total(rows), rows[0]];
    };
    expect(await figures('visitors_hours', RECENT_START, TODAY)).toEqual([302663, { value: '12', count: 25968 }]);
    expect(await figures('visitors_hours', '2026-02-01', '2026-02-28')).toEqual([77689, { value: '14', count: 6628 }]);
    expect(await figures('landing_page', RECENT_START, TODAY)).toEqual([303671, { value: '/', count: 144767 }]);
    expect(await figures('landing_page', '2026-02-01', '2026-02-28')).toEqual([77371, { value: '/', count: 37324 }]);
  });

  it('is deterministic for a seed', async () => {
    const twin = await startSandbox({ port: 0, today: TODAY, dialect: 'legacy' });
    try {
      for (const name of ['landing_page', 'visitors_hours', 'pageviews_hours']) {
        expect(await allRows(twin, 2, name)).toEqual(await allRows(sandbox, 2, name));
      }
    } finally {
      await twin.close();
    }
  });
});

describe('the contract dialect', () => {
  it.each(['landing_page', 'pageviews_hours', 'visitors_hours', 'os', 'pageviews', 'resolution', 'visitors'])(
    'refuses %s with a 422 on name',
    async (name) => {
      const contract = await startSandbox({ port: 0, today: TODAY });
      try {
        const reply = await call(contract, statsPath(1, name, WINDOW_START, TODAY));
        expect(reply.status).toBe(422);
        expect(reply.body).toEqual(NAME_INVALID);
      } finally {
        await contract.close();
      }
    },
  );
});

describe('stats as a plain Laravel paginator', () => {
  it('has the exact shape, keys in Laravel’s order', async () => {
    const path = `${sandbox.url}/api/v1/stats/1`;
    const reply = await stats(1, 'browser');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual([
      'current_page',
      'data',
      'first_page_url',
      'from',
      'last_page',
      'last_page_url',
      'links',
      'next_page_url',
      'path',
      'per_page',
      'prev_page_url',
      'to',
      'total',
      'status',
    ]);
    expect(reply.body.data).toHaveLength(10);
    expect(reply.body.data[0]).toEqual({ value: 'Chrome', count: expect.any(Number) });
    expect({ ...reply.body, data: [] }).toEqual({
      current_page: 1,
      data: [],
      first_page_url: `${path}?page=1`,
      from: 1,
      last_page: 2,
      last_page_url: `${path}?page=2`,
      links: [
        { url: null, label: '&laquo; Previous', active: false },
        { url: `${path}?page=1`, label: '1', active: true },
        { url: `${path}?page=2`, label: '2', active: false },
        { url: `${path}?page=2`, label: 'Next &raquo;', active: false },
      ],
      next_page_url: `${path}?page=2`,
      path,
      per_page: '10',
      prev_page_url: null,
      to: 10,
      total: 12,
      status: 200,
    });
    expect(reply.text).toContain('"per_page":"10"');
  });

  it('pages through every row, and a page past the end is empty with from/to null', async () => {
    const path = `${sandbox.url}/api/v1/stats/1`;
    const everything = (await stats(1, 'country', WINDOW_START, TODAY, { per_page: '100' })).body;
    expect(everything.total).toBe(16);
    expect(everything.last_page).toBe(1);
    const seen: StatRow[] = [];
    for (let page = 1; page <= 3; page++) {
      const reply = (await stats(1, 'country', WINDOW_START, TODAY, { page: String(page) })).body;
      expect(reply).toMatchObject({ current_page: page, last_page: 2, total: 16, per_page: '10' });
      if (page === 1) expect(reply).toMatchObject({ from: 1, to: 10, prev_page_url: null, next_page_url: `${path}?page=2` });
      if (page === 2) {
        expect(reply).toMatchObject({ from: 11, to: 16, prev_page_url: `${path}?page=1`, next_page_url: null });
        expect(reply.links.map((link) => [link.label, link.active])).toEqual([
          ['&laquo; Previous', false],
          ['1', false],
          ['2', true],
          ['Next &raquo;', false],
        ]);
        expect(reply.links.at(-1)?.url).toBeNull();
      }
      if (page === 3) {
        expect(reply).toMatchObject({ data: [], from: null, to: null, prev_page_url: `${path}?page=2`, next_page_url: null });
        expect(reply.links.filter((link) => link.active)).toEqual([]);
      }
      seen.push(...reply.data);
    }
    expect(seen).toEqual(everything.data);
  });

  it('shows a sliding window of page links when there are many pages', async () => {
    const labels = async (page: number) =>
      (await stats(1, 'page', WINDOW_START, TODAY, { per_page: '1', page: String(page) })).body.links
        .map((link) => link.label)
        .slice(1, -1);
    const last = (await stats(1, 'page', WINDOW_START, TODAY, { per_page: '1' })).body.last_page;
    expect(last).toBe(32);
    expect(await labels(1)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '...', '31', '32']);
    expect(await labels(16)).toEqual(['1', '2', '...', '13', '14', '15', '16', '17', '18', '19', '...', '31', '32']);
    expect(await labels(30)).toEqual(['1', '2', '...', '23', '24', '25', '26', '27', '28', '29', '30', '31', '32']);
    const gap = (await stats(1, 'page', WINDOW_START, TODAY, { per_page: '1', page: '16' })).body.links[3];
    expect(gap).toEqual({ url: null, label: '...', active: false });
  });

  it('follows Laravel’s UrlWindow at the edges', () => {
    expect(pageWindow(1, 1)).toEqual([1]);
    expect(pageWindow(5, 13)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(pageWindow(7, 14)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null, 13, 14]);
    expect(pageWindow(8, 14)).toEqual([1, 2, null, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(pageWindow(8, 20)).toEqual([1, 2, null, 5, 6, 7, 8, 9, 10, 11, null, 19, 20]);
    expect(pageWindow(99, 20)).toEqual([1, 2, null, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  });

  it('keeps the resource-collection envelope for the websites list', async () => {
    const reply = await list();
    const path = `${sandbox.url}/api/v1/websites`;
    expect(reply.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=1`, prev: null, next: null });
    expect(reply.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 10, to: 7, total: 7 });
    expect(reply.body.status).toBe(200);
  });
});

describe('websites', () => {
  it('have no exclude_params and no favorite key', async () => {
    const reply = await show(1);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      data: {
        id: 1,
        domain: 'acme-analytics.com',
        privacy: 0,
        email: 1,
        password: false,
        exclude_bots: 1,
        exclude_ips: null,
        created_at: '2022-12-01T17:40:00.000000Z',
        updated_at: '2022-12-31T17:52:34.000000Z',
      },
      status: 200,
    });
    expect(Object.keys(reply.body.data)).toEqual([
      'id',
      'domain',
      'privacy',
      'email',
      'password',
      'exclude_bots',
      'exclude_ips',
      'created_at',
      'updated_at',
    ]);
    for (const website of (await list()).body.data) {
      expect(website).not.toHaveProperty('favorite');
      expect(website).not.toHaveProperty('exclude_params');
    }
  });

  it('ignores the list’s favorite filter', async () => {
    const all = [10, 8, 7, 5, 4, 2, 1];
    for (const favorite of ['1', '0', 'true', 'maybe']) {
      const reply = await list(`?favorite=${favorite}`);
      expect(reply.status, favorite).toBe(200);
      expect(
        reply.body.data.map((website) => website.id),
        favorite,
      ).toEqual(all);
    }
  });

  it('ignores favorite on update with a 200, and stores exclude_params without returning it', async () => {
    const before = (await show(2)).body.data;
    for (const method of ['PATCH', 'PUT']) {
      const ignored = await update(2, { favorite: '1' }, method);
      expect(ignored.status).toBe(200);
      expect(ignored.body).toEqual({ data: before, status: 200 });
      expect((await update(2, { favorite: 'maybe' }, method)).status).toBe(200);
    }
    const params = await update(2, { exclude_params: 'ref\nutm_source' });
    expect(params.status).toBe(200);
    expect(params.body.data).not.toHaveProperty('exclude_params');
    // It was stored: the website changed, so updated_at moved.
    expect(params.body.data.updated_at > before.updated_at).toBe(true);
    expect((await show(2)).body.data).toEqual({ ...before, updated_at: params.body.data.updated_at });
  });

  it('stores NULL for privacy and email when a create does not send them', async () => {
    const created = await store({ domain: 'bare.example.com' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        id: 11,
        domain: 'bare.example.com',
        privacy: null,
        email: null,
        password: false,
        exclude_bots: 1,
        exclude_ips: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      status: 201,
    });
    expect((await show(11)).body.data).toMatchObject({ privacy: null, email: null, exclude_bots: 1 });
    expect((await list('?search=bare')).body.data[0]).toMatchObject({ privacy: null, email: null });
    // An update that sets one leaves the other NULL.
    expect((await update(11, { email: '1' })).body.data).toMatchObject({ privacy: null, email: '1' });
    expect((await show(11)).body.data).toMatchObject({ privacy: null, email: 1 });
  });

  it('echoes the posted strings after a create, and numbers on later reads', async () => {
    const created = await store({
      domain: 'echo.example.com',
      privacy: '2',
      password: 'pw',
      email: '1',
      exclude_bots: '0',
      exclude_ips: '192.0.2.1',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ privacy: '2', email: '1', exclude_bots: '0', password: true, exclude_ips: '192.0.2.1' });
    expect(created.text).toContain('"privacy":"2"');
    const read = (await show(created.body.data.id)).body.data;
    expect(read).toMatchObject({ privacy: 2, email: 1, exclude_bots: 0, password: true });
    expect(read).toEqual({ ...created.body.data, privacy: 2, email: 1, exclude_bots: 0 });
  });

  it('echoes only the fields an update sent; the others stay numbers', async () => {
    const reply = await update(7, { privacy: '1', exclude_bots: '0' }, 'PUT');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id: 7, privacy: '1', exclude_bots: '0', email: 0 });
    expect((await show(7)).body.data).toMatchObject({ privacy: 1, exclude_bots: 0, email: 0 });
    const json = await call<One>(sandbox, '/api/v1/websites/7', { method: 'PATCH', json: { email: 1 } });
    expect(json.body.data).toMatchObject({ email: 1, privacy: 1 });
  });

  it('still validates writes with the contract’s rules', async () => {
    const reply = await store({ domain: 'ok.example.com', privacy: '3' });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ message: { privacy: ['The selected privacy is invalid.'] }, status: 422 });
  });

  it.each(['PUT', 'PATCH'])('answers a %s of an unknown or another user’s id with the model-not-found 404', async (method) => {
    for (const id of ['999', '3', 'abc']) {
      const reply = await update(id, { privacy: '1' }, method);
      expect(reply.status, id).toBe(404);
      expect(reply.body, id).toEqual(MODEL_NOT_FOUND);
      expect(reply.text, id).toBe('{"message":"No query results for model [App\\\\Models\\\\Website]."}');
    }
    // Not a change: user 2's website is as it was.
    expect((await call<One>(sandbox, '/api/v1/websites/3', { key: KEY_2 })).body.data.privacy).toBe(1);
  });

  it('keeps part B’s 404 everywhere else', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/websites/3'],
      ['GET', '/api/v1/websites/999'],
      ['DELETE', '/api/v1/websites/3'],
      ['GET', '/api/v1/nope'],
    ]) {
      const reply = await call(sandbox, path as string, { method });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body, `${method} ${path}`).toEqual(NOT_FOUND);
    }
  });
});

describe('stats of another user’s website', () => {
  it('are served: the stats endpoint does not check the owner', async () => {
    const theirs = await stats(3, 'country', WINDOW_START, TODAY, {}, KEY_1);
    expect(theirs.status).toBe(200);
    expect(theirs.body.total).toBeGreaterThan(0);
    expect(theirs.body).toEqual((await stats(3, 'country', WINDOW_START, TODAY, {}, KEY_2)).body);
    expect((await stats(1, 'visitors', WINDOW_START, TODAY, {}, KEY_2)).body.total).toBe(1100);
    // The website endpoints still refuse it.
    expect((await show(3)).body).toEqual(NOT_FOUND);
  });

  it('an id that does not exist at all is part B’s 404', async () => {
    expect((await call(sandbox, '/api/v1/websites/2', { method: 'DELETE' })).status).toBe(200);
    for (const id of ['999', 'abc', '2']) {
      const reply = await call(sandbox, `/api/v1/stats/${id}?name=visitors&from=${WINDOW_START}&to=${TODAY}`);
      expect(reply.status, id).toBe(404);
      expect(reply.body, id).toEqual(NOT_FOUND);
    }
  });
});

describe('reads with little validation', () => {
  it('takes any per_page for stats: 7 gives 7 rows, 0 gives 15', async () => {
    const seven = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '7' });
    expect(seven.body.data).toHaveLength(7);
    expect(seven.body).toMatchObject({ per_page: '7', from: 1, to: 7, last_page: Math.ceil(seven.body.total / 7) });
    const zero = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '0' });
    expect(zero.body.data).toHaveLength(15);
    expect(zero.body).toMatchObject({ per_page: '15', to: 15 });
    const empty = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '' });
    expect(empty.body.data).toHaveLength(10);
  });

  it('takes any per_page for the websites list', async () => {
    const three = await list('?per_page=3');
    expect(three.body.data).toHaveLength(3);
    expect(three.body.meta).toMatchObject({ per_page: 3, last_page: 3, total: 7 });
    expect((await list('?per_page=7')).body.data).toHaveLength(7);
    const zero = await list('?per_page=0');
    expect(zero.body.data).toHaveLength(7);
    expect(zero.body.meta).toMatchObject({ per_page: 15, last_page: 1 });
  });

  it.each(['abc', '-1', '1.5', '10abc'])('answers per_page=%s with a 500', async (perPage) => {
    for (const reply of [await stats(1, 'browser', WINDOW_START, TODAY, { per_page: perPage }), await list(`?per_page=${perPage}`)]) {
      expect(reply.status).toBe(500);
      expect(reply.body).toEqual(SERVER_ERROR);
    }
  });

  it('answers an unknown sort or sort_by with a 500, and takes the direction in any case', async () => {
    const extras: Record<string, string>[] = [{ sort: 'sideways' }, { sort: 'down' }, { sort_by: 'total' }];
    for (const extra of extras) {
      const reply = await stats(1, 'browser', WINDOW_START, TODAY, extra);
      expect(reply.status, JSON.stringify(extra)).toBe(500);
      expect(reply.body).toEqual(SERVER_ERROR);
      const websites = await list(`?${new URLSearchParams(extra).toString()}`);
      expect(websites.status, JSON.stringify(extra)).toBe(500);
      expect(websites.body).toEqual(SERVER_ERROR);
    }
    const asc = await stats(1, 'country', WINDOW_START, TODAY, { sort: 'ASC', sort_by: 'value' });
    expect(asc.body.data[0]?.value).toBe('AU:Australia');
    expect((await list('?sort=ASC')).body.data[0]?.id).toBe(1);
  });

  it('ignores search_by', async () => {
    const rows = await stats(1, 'country', WINDOW_START, TODAY, { search: 'united', search_by: 'count', sort_by: 'value', sort: 'asc' });
    expect(rows.status).toBe(200);
    expect(rows.body.data.map((row) => row.value)).toEqual(['GB:United Kingdom', 'US:United States']);
    const websites = await list('?search=acme&search_by=id');
    expect(websites.body.data.map((website) => website.id)).toEqual([8, 4, 2, 1]);
  });

  it('still checks name, from and to, and that 422 wins over a 500', async () => {
    const reply = await call<ErrorBody>(sandbox, '/api/v1/stats/1?name=bogus&from=2026-03-01&sort=sideways&per_page=abc');
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ message: { name: ['The selected name is invalid.'], to: ['The to field is required.'] }, status: 422 });
  });
});

describe('without a valid key', () => {
  const raw = (path: string, headers: Record<string, string>) => fetch(sandbox.url + path, { headers, redirect: 'manual' });

  it('redirects to /login unless the client asks for JSON', async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { accept: 'text/html' },
      { accept: 'text/html, application/json' },
    ];
    for (const headers of variants) {
      const response = await raw('/api/v1/websites', headers);
      expect(response.status, JSON.stringify(headers)).toBe(302);
      expect(response.headers.get('location')).toBe(`${sandbox.url}/login`);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain(`Redirecting to <a href="${sandbox.url}/login">`);
    }
    expect((await raw(statsPath(1, 'visitors', WINDOW_START, TODAY), {})).status).toBe(302);
  });

  it('answers the 401 to a client that asks for JSON', async () => {
    const variants: Record<string, string>[] = [
      { accept: 'application/json' },
      { accept: 'application/json', authorization: 'Bearer nope' },
      { accept: 'application/vnd.api+json' },
      { accept: 'text/html;q=0.5, application/json' },
      { 'x-requested-with': 'XMLHttpRequest' },
    ];
    for (const headers of variants) {
      const response = await raw('/api/v1/websites', headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(await response.json()).toEqual({ message: 'Unauthenticated.' });
    }
  });

  it('serves a valid key whatever the Accept header', async () => {
    const response = await raw('/api/v1/websites/1', { authorization: `Bearer ${KEY_1}` });
    expect(response.status).toBe(200);
    expect(((await response.json()) as One).data.id).toBe(1);
  });

  it('is always the 401 in the contract dialect', async () => {
    const contract = await startSandbox({ port: 0, today: TODAY });
    try {
      const response = await fetch(`${contract.url}/api/v1/websites`, { redirect: 'manual' });
      expect(response.status).toBe(401);
    } finally {
      await contract.close();
    }
  });
});

describe('rate limit of 60 a minute per key (throttle:60,1)', () => {
  it.each(['contract', 'legacy'] as const)('in the %s dialect', async (dialect) => {
    const limited = await startSandbox({ port: 0, today: TODAY, dialect, rateLimit: { limit: 60, windowMs: 60_000 } });
    try {
      for (let i = 1; i <= 60; i++) {
        const reply = await call(limited, i % 2 === 0 ? '/api/v1/websites' : '/api/v1/websites/1');
        expect(reply.status).toBe(200);
        expect(reply.headers.get('x-ratelimit-limit')).toBe('60');
        expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(60 - i));
      }
      const refused = await call(limited, '/api/v1/websites');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ message: 'Too Many Attempts.' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(55);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      // Per key: the other user has the whole minute.
      const other = await call(limited, '/api/v1/websites', { key: KEY_2 });
      expect(other.status).toBe(200);
      expect(other.headers.get('x-ratelimit-remaining')).toBe('59');
      // Every answer counts and carries the headers, errors included.
      const missing = await call(limited, '/api/v1/websites/999', { key: KEY_2 });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-ratelimit-remaining')).toBe('58');
    } finally {
      await limited.close();
    }
  });
});

describe('apportion', () => {
  it('splits a total into whole numbers in proportion, adding up exactly', () => {
    expect(apportion(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(apportion(7, [0.5, 0.25, 0.25])).toEqual([3, 2, 2]); // 3.5, 1.75, 1.75: the larger remainders round up
    expect(apportion(0, [1, 2])).toEqual([0, 0]);
    const parts = apportion(1234, [0.3, 1.7, 2.2, 0.01, 5]);
    expect(parts.reduce((sum, part) => sum + part, 0)).toBe(1234);
  });
});
