// GET /api/v1/stats/{id}: the 14 names and their value encodings, range sums, sorting, search,
// pagination, validation, and deterministic seeded data relative to a pinned "today".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_STAT_NAMES as STAT_NAMES } from '../../src/sandbox/dialect.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { KEY_2, TODAY, call, statsPath } from './http.js';
import type { StatRow, WirePage } from './http.js';

const WINDOW_START = '2023-03-12'; // TODAY - 1099 days: the seeded window is the 1100 days ending today
const RECENT_START = '2025-11-16'; // TODAY - 119 days: the days whose figures did not change when the window grew from 120
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
});
afterAll(async () => {
  await sandbox.close();
});

type StatPage = WirePage<StatRow>;
const stats = (id: number, name: string, from = WINDOW_START, to = TODAY, extra: Record<string, string> = {}, key?: string) =>
  call<StatPage>(sandbox, statsPath(id, name, from, to, extra), { key });

/** Every row of a statistic over the range, through the pages. */
async function allRows(
  id: number,
  name: string,
  from = WINDOW_START,
  to = TODAY,
  extra: Record<string, string> = {},
  key?: string,
): Promise<StatRow[]> {
  const rows: StatRow[] = [];
  for (let page = 1; ; page++) {
    const reply = await stats(id, name, from, to, { per_page: '100', page: String(page), ...extra }, key);
    expect(reply.status).toBe(200);
    rows.push(...reply.body.data);
    if (page >= reply.body.meta.last_page) return rows;
  }
}
const total = (rows: StatRow[]): number => rows.reduce((sum, row) => sum + row.count, 0);
const invalid = (fields: Record<string, string[]>) => ({ message: fields, status: 422 });

describe('values and their encodings', () => {
  it.each([
    ['visitor', /^\d{4}-\d{2}-\d{2}$/, 1100, '2026-03-15'],
    ['pageview', /^\d{4}-\d{2}-\d{2}$/, 1100, WINDOW_START],
    ['country', /^[A-Z]{2}:[A-Z][\w ]+$/, 12, 'US:United States'],
    ['continent', /^[A-Z]{2}:[A-Z][\w ]+$/, 5, 'EU:Europe'],
    ['city', /^[A-Z]{2}:\S.*$/, 12, 'US:New York, NY'],
    ['event', /^[a-z_]+:[^:]*:[^:]*$/, 3, 'signup::'],
    ['page', /^\/\S*$/, 20, '/pricing?plan=pro'],
    ['language', /^[a-z]{2}$/, 10, 'en'],
    ['referrer', /^[a-z0-9.-]+\.[a-z]{2,}$/, 20, 'google.com'],
    ['browser', /^[A-Z][\w ]+$/, 12, 'Chrome'],
    ['operating_system', /^[A-Za-z][\w .]+$/, 6, 'Windows'],
    ['device', /^[A-Z][a-z]+$/, 3, 'Mobile'],
    ['screen_resolution', /^\d+x\d+$/, 10, '1920x1080'],
    ['campaign', /^[a-z_0-9]+$/, 1, 'spring_launch'],
  ])('%s rows look like %s', async (name, pattern, atLeast, example) => {
    const rows = await allRows(1, name);
    expect(rows.length).toBeGreaterThanOrEqual(atLeast);
    for (const row of rows) {
      expect(row.value).toMatch(pattern);
      expect(typeof row.count).toBe('number');
      expect(Number.isInteger(row.count) && row.count > 0).toBe(true);
    }
    expect(rows.map((row) => row.value)).toContain(example);
    expect(new Set(rows.map((row) => row.value)).size).toBe(rows.length); // grouped by value
  });

  it('covers all 14 names on every seeded website, for both users', async () => {
    for (const [id, key] of [
      [1, undefined],
      [2, undefined],
      [4, undefined],
      [5, undefined],
      [7, undefined],
      [3, KEY_2],
      [6, KEY_2],
      [9, KEY_2],
    ] as const) {
      for (const name of STAT_NAMES) {
        if (name === 'campaign' || name === 'event') continue; // some sites run none
        const reply = await stats(id, name, WINDOW_START, TODAY, {}, key);
        expect(reply.status).toBe(200);
        expect(reply.body.meta.total, `${id} ${name}`).toBeGreaterThan(0);
      }
    }
  });

  it('has a day for each of the last 1100 days, ending today', async () => {
    const days = (await allRows(1, 'visitor', '2023-01-01', '2026-12-31')).map((row) => row.value).sort();
    expect(days).toHaveLength(1100);
    expect(days[0]).toBe(WINDOW_START);
    expect(days.at(-1)).toBe(TODAY);
  });

  it('has fewer visitors at weekends than on weekdays', async () => {
    const rows = await allRows(1, 'visitor');
    const weekend = rows.filter((row) => [0, 6].includes(new Date(`${row.value}T00:00:00Z`).getUTCDay()));
    const weekdays = rows.filter((row) => !weekend.includes(row));
    const mean = (list: StatRow[]) => total(list) / list.length;
    expect(weekend.length).toBeGreaterThan(30);
    expect(mean(weekend)).toBeLessThan(mean(weekdays) * 0.85);
  });

  it('has more pageviews than visitors every day, and continents that add up to countries', async () => {
    const visitors = new Map((await allRows(5, 'visitor')).map((row) => [row.value, row.count]));
    for (const row of await allRows(5, 'pageview')) expect(row.count).toBeGreaterThanOrEqual(visitors.get(row.value) ?? Infinity);
    expect(total(await allRows(5, 'continent'))).toBe(total(await allRows(5, 'country')));
  });
});

describe('ranges', () => {
  it('sums each value over the days of the range', async () => {
    const days = ['2026-02-01', '2026-02-02', '2026-02-03'];
    const single = await Promise.all(days.map((day) => allRows(1, 'browser', day, day)));
    const range = await allRows(1, 'browser', days[0], days[2]);
    const chrome = (rows: StatRow[]) => rows.find((row) => row.value === 'Chrome')?.count ?? 0;
    expect(chrome(range)).toBe(single.reduce((sum, rows) => sum + chrome(rows), 0));
    expect(total(range)).toBe(single.reduce((sum, rows) => sum + total(rows), 0));
  });

  it('gives one row per day for the daily series, and one row for a one-day range', async () => {
    const week = await allRows(7, 'pageview', '2026-03-01', '2026-03-07');
    expect(week.map((row) => row.value).sort()).toEqual(['01', '02', '03', '04', '05', '06', '07'].map((d) => `2026-03-${d}`));
    const day = await stats(7, 'visitor', '2026-03-10', '2026-03-10');
    expect(day.body.data).toHaveLength(1);
    expect(day.body.data[0]?.value).toBe('2026-03-10');
  });

  it('is empty outside the seeded window and clipped where it overlaps', async () => {
    const before = await stats(1, 'country', '2020-01-01', '2020-12-31');
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual([]);
    expect(before.body.meta).toMatchObject({ total: 0, from: null, to: null, last_page: 1 });
    expect((await stats(1, 'visitor', '2026-03-16', '2026-04-30')).body.meta.total).toBe(0);
    expect((await stats(1, 'visitor', '2023-03-01', '2023-03-20')).body.meta.total).toBe(9);
  });

  it('has no stats for a website created through the API', async () => {
    const created = await call<{ data: { id: number } }>(sandbox, '/api/v1/websites', {
      method: 'POST',
      form: { domain: 'fresh.example.com' },
    });
    const reply = await stats(created.body.data.id, 'visitor');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual([]);
    expect(reply.body.meta.total).toBe(0);
  });
});

describe('the year before', () => {
  /** Websites created more than 1100 days before TODAY, and those created since, with their owner's key. */
  const OLDER = [
    [1, undefined],
    [2, undefined],
    [3, KEY_2],
    [4, undefined],
    [5, undefined],
  ] as const;
  const YOUNGER = [
    [6, KEY_2],
    [7, undefined],
    [8, undefined],
    [9, KEY_2],
    [10, undefined],
  ] as const;
  const shiftDay = (ymd: string, days: number): string =>
    new Date(Date.parse(`${ymd}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

  it('has rows for every statistic over the same dates a year earlier', async () => {
    for (const [id, key] of OLDER) {
      for (const name of STAT_NAMES) {
        if (name === 'campaign' || name === 'event') continue; // some sites run none
        for (const [from, to] of [
          ['2025-02-15', '2025-03-15'],
          ['2026-02-15', TODAY],
        ]) {
          const reply = await stats(id, name, from, to, {}, key);
          expect(reply.status).toBe(200);
          expect(reply.body.meta.total, `${id} ${name} ${from}`).toBeGreaterThan(0);
          if (name === 'visitor') expect(reply.body.meta.total).toBe(29);
        }
      }
    }
    // Campaigns ran a year earlier too, and events happened.
    expect(total(await allRows(5, 'campaign', WINDOW_START, shiftDay(RECENT_START, -1)))).toBeGreaterThan(0);
    expect(total(await allRows(1, 'event', '2025-02-15', '2025-03-15'))).toBeGreaterThan(0);
  });

  it('is a year of its own: other figures, a trend, the weekly rhythm, continents adding up to countries', async () => {
    const thisYear = await allRows(1, 'visitor', '2026-03-01', TODAY);
    const lastYear = await allRows(1, 'visitor', '2025-03-01', '2025-03-15');
    expect(lastYear.map((row) => row.count)).not.toEqual(thisYear.map((row) => row.count));
    expect(total(lastYear)).toBeLessThan(total(thisYear)); // acme-analytics.com grows
    expect(total(lastYear)).toBeGreaterThan(total(thisYear) * 0.5);
    const weekend = lastYear.filter((row) => [0, 6].includes(new Date(`${row.value}T00:00:00Z`).getUTCDay()));
    const weekdays = lastYear.filter((row) => !weekend.includes(row));
    expect(total(weekend) / weekend.length).toBeLessThan((total(weekdays) / weekdays.length) * 0.85);
    const before = shiftDay(RECENT_START, -1);
    expect(total(await allRows(2, 'continent', WINDOW_START, before))).toBe(total(await allRows(2, 'country', WINDOW_START, before)));
    const visitors = new Map((await allRows(2, 'visitor', WINDOW_START, before)).map((row) => [row.value, row.count]));
    for (const row of await allRows(2, 'pageview', WINDOW_START, before))
      expect(row.count).toBeGreaterThanOrEqual(visitors.get(row.value) ?? Infinity);
  });

  it('has nothing before a website was created, and every day from its creation on', async () => {
    for (const [id, key] of YOUNGER) {
      const createdAt = (await call<{ data: { created_at: string } }>(sandbox, `/api/v1/websites/${id}`, { key })).body.data.created_at;
      const created = createdAt.slice(0, 10);
      expect(created > WINDOW_START, `${id} created ${created}`).toBe(true);
      for (const name of STAT_NAMES) {
        const before = await stats(id, name, '2020-01-01', shiftDay(created, -1), {}, key);
        expect(before.status).toBe(200);
        expect(before.body.meta.total, `${id} ${name} before ${created}`).toBe(0);
      }
      const days = (await allRows(id, 'visitor', WINDOW_START, TODAY, { sort_by: 'value', sort: 'asc' }, key)).map((row) => row.value);
      expect(days[0], `${id}`).toBe(created);
      expect(days).toHaveLength((Date.parse(TODAY) - Date.parse(created)) / 86_400_000 + 1);
      expect((await stats(id, 'country', created, created, {}, key)).body.meta.total, `${id}`).toBeGreaterThan(0);
    }
    // The older websites have the whole window.
    for (const [id, key] of OLDER) expect((await stats(id, 'visitor', WINDOW_START, WINDOW_START, {}, key)).body.meta.total).toBe(1);
  });

  it('starts small on a new website and grows over its first weeks', async () => {
    // tailspin-travel.com was created 350 days before TODAY.
    const created = shiftDay(TODAY, -350);
    const firstWeek = total(await allRows(7, 'visitor', created, shiftDay(created, 6)));
    const fifthWeek = total(await allRows(7, 'visitor', shiftDay(created, 28), shiftDay(created, 34)));
    expect(firstWeek).toBeLessThan(fifthWeek * 0.6);
  });
});

describe('sorting, search and pages', () => {
  it('sorts by count descending by default, ties by value ascending', async () => {
    const reply = await stats(1, 'page');
    expect(reply.body.data).toHaveLength(10);
    expect(reply.body.data[0]?.value).toBe('/');
    const rows = await allRows(1, 'visitor', '2025-12-01', '2026-02-28');
    rows.slice(1).forEach((row, i) => {
      const previous = rows[i] as StatRow;
      expect(previous.count > row.count || (previous.count === row.count && previous.value < row.value)).toBe(true);
    });
  });

  it('sorts by count ascending with ties by value ascending', async () => {
    const rows = await allRows(8, 'language', WINDOW_START, TODAY, { sort: 'asc' });
    rows.slice(1).forEach((row, i) => {
      const previous = rows[i] as StatRow;
      expect(previous.count < row.count || (previous.count === row.count && previous.value < row.value)).toBe(true);
    });
  });

  it('breaks ties by value ascending', async () => {
    // One day of a tiny site: several screen resolutions share a count.
    const rows = await allRows(10, 'screen_resolution', '2026-03-15', '2026-03-15');
    const counts = rows.map((row) => row.count);
    expect(new Set(counts).size).toBeLessThan(counts.length);
    for (const direction of ['asc', 'desc']) {
      const sorted = await allRows(10, 'screen_resolution', '2026-03-15', '2026-03-15', { sort: direction });
      sorted.slice(1).forEach((row, i) => {
        const previous = sorted[i] as StatRow;
        if (previous.count === row.count) expect(previous.value < row.value).toBe(true);
      });
    }
  });

  it('sorts by value in both directions', async () => {
    const asc = (await allRows(1, 'country', WINDOW_START, TODAY, { sort_by: 'value', sort: 'asc' })).map((row) => row.value);
    expect(asc).toEqual([...asc].sort());
    expect(asc[0]).toBe('AU:Australia');
    const desc = (await allRows(1, 'country', WINDOW_START, TODAY, { sort_by: 'value' })).map((row) => row.value);
    expect(desc).toEqual([...asc].reverse());
  });

  it('searches values case-insensitively by substring', async () => {
    const rows = await allRows(1, 'country', WINDOW_START, TODAY, { search: 'UNITED', search_by: 'value', sort_by: 'value', sort: 'asc' });
    expect(rows.map((row) => row.value)).toEqual(['GB:United Kingdom', 'US:United States']);
    const days = await allRows(1, 'visitor', WINDOW_START, TODAY, { search: '2026-02' });
    expect(days).toHaveLength(28);
    expect((await stats(1, 'page', WINDOW_START, TODAY, { search: 'no-such-page' })).body.meta.total).toBe(0);
  });

  it('paginates with links and meta; past the last page is empty with correct meta', async () => {
    const path = `${sandbox.url}/api/v1/stats/1`;
    const first = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '25' });
    const totalRows = first.body.meta.total;
    expect(totalRows).toBeGreaterThan(25);
    const lastPage = Math.ceil(totalRows / 25);
    expect(first.body.meta).toEqual({ current_page: 1, from: 1, last_page: lastPage, path, per_page: 25, to: 25, total: totalRows });
    expect(first.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=${lastPage}`, prev: null, next: `${path}?page=2` });
    const second = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '25', page: '2' });
    expect(second.body.data[0]).toEqual((await stats(1, 'page', WINDOW_START, TODAY, { per_page: '50' })).body.data[25]);
    const past = await stats(1, 'page', WINDOW_START, TODAY, { per_page: '25', page: String(lastPage + 1) });
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toEqual({
      current_page: lastPage + 1,
      from: null,
      last_page: lastPage,
      path,
      per_page: 25,
      to: null,
      total: totalRows,
    });
    for (const perPage of ['10', '50', '100']) {
      expect((await stats(1, 'visitor', WINDOW_START, TODAY, { per_page: perPage })).body.data).toHaveLength(Number(perPage));
    }
  });
});

describe('validation', () => {
  it.each([
    ['', { name: ['The name field is required.'], from: ['The from field is required.'], to: ['The to field is required.'] }],
    [`name=bounce&from=${WINDOW_START}&to=${TODAY}`, { name: ['The selected name is invalid.'] }],
    ['name=visitor&from=2026-02-30&to=2026-03-01', { from: ['The from field must match the format Y-m-d.'] }],
    ['name=visitor&from=2026-03-01&to=2026-13-01', { to: ['The to field must match the format Y-m-d.'] }],
    ['name=visitor&from=2026-3-1&to=2026-03-05', { from: ['The from field must match the format Y-m-d.'] }],
    ['name=visitor&from=01/03/2026&to=2026-03-05', { from: ['The from field must match the format Y-m-d.'] }],
    ['name=visitor&from=2026-03-10&to=2026-03-09', { to: ['The to field must be a date after or equal to from.'] }],
    ['name=visitor&from=2026-03-01&to=2026-03-05&sort_by=total', { sort_by: ['The selected sort by is invalid.'] }],
    ['name=visitor&from=2026-03-01&to=2026-03-05&sort=down', { sort: ['The selected sort is invalid.'] }],
    ['name=visitor&from=2026-03-01&to=2026-03-05&per_page=20', { per_page: ['The selected per page is invalid.'] }],
    ['name=visitor&from=2026-03-01&to=2026-03-05&search=a&search_by=count', { search_by: ['The selected search by is invalid.'] }],
    ['name=Visitor&from=2026-03-01', { name: ['The selected name is invalid.'], to: ['The to field is required.'] }],
  ])('?%s is a 422', async (query, errors) => {
    const reply = await call(sandbox, `/api/v1/stats/1?${query}`);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual(invalid(errors));
  });

  it('accepts a leap day and a one-day range', async () => {
    expect((await stats(1, 'visitor', '2024-02-29', '2024-02-29')).status).toBe(200);
    expect((await stats(1, 'visitor', TODAY, TODAY)).body.meta.total).toBe(1);
  });

  it('answers 404 for unknown, non-numeric and other users’ websites', async () => {
    for (const id of ['3', '999', 'abc']) {
      const reply = await call(sandbox, `/api/v1/stats/${id}?name=visitor&from=${WINDOW_START}&to=${TODAY}`);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ message: 'Resource not found.', status: 404 });
    }
    expect((await stats(3, 'visitor', WINDOW_START, TODAY, {}, KEY_2)).status).toBe(200);
  });
});

describe('seeded data', () => {
  const snapshot = async (target: Sandbox) =>
    Promise.all(
      STAT_NAMES.map(
        async (name) => (await call<StatPage>(target, statsPath(5, name, WINDOW_START, TODAY, { per_page: '100' }))).body.data,
      ),
    );

  it('is identical for the same seed and today, and differs with another seed', async () => {
    const twin = await startSandbox({ today: TODAY });
    const other = await startSandbox({ today: TODAY, seed: 7 });
    try {
      const mine = await snapshot(sandbox);
      expect(await snapshot(twin)).toEqual(mine);
      expect(await snapshot(other)).not.toEqual(mine);
      expect((await call(twin, '/api/v1/websites/1')).body).toEqual((await call(sandbox, '/api/v1/websites/1')).body);
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });

  it('keeps the figures of the 120 days ending today that it had when its window was 120 days long', async () => {
    // Taken from the sandbox before the window grew to 400 days; gateway tests rely on such figures.
    const figures: [number, string, string | undefined, number, StatRow, number, StatRow][] = [
      [1, 'visitor', undefined, 191288, { value: '2025-12-07', count: 2903 }, 46172, { value: '2026-02-16', count: 2122 }],
      [1, 'country', undefined, 192386, { value: 'US:United States', count: 71116 }, 46490, { value: 'US:United States', count: 17104 }],
      [3, 'page', KEY_2, 125105, { value: '/', count: 39979 }, 30178, { value: '/', count: 9568 }],
      [5, 'campaign', undefined, 6801, { value: 'winter_sale', count: 2667 }, 3579, { value: 'newsletter_january', count: 1622 }],
      [9, 'event', KEY_2, 6645, { value: 'newsletter:sidebar:', count: 3369 }, 1555, { value: 'newsletter:sidebar:', count: 810 }],
      [10, 'browser', undefined, 2237, { value: 'Chrome', count: 1268 }, 526, { value: 'Chrome', count: 303 }],
    ];
    for (const [id, name, key, recentTotal, recentTop, februaryTotal, februaryTop] of figures) {
      const recent = await allRows(id, name, RECENT_START, TODAY, {}, key);
      expect([total(recent), recent[0]], `${id} ${name}`).toEqual([recentTotal, recentTop]);
      const february = await allRows(id, name, '2026-02-01', '2026-02-28', {}, key);
      expect([total(february), february[0]], `${id} ${name} February`).toEqual([februaryTotal, februaryTop]);
    }
  });

  it('moves with "today", which defaults to the real UTC date', async () => {
    const pinned = await startSandbox({ today: '2026-01-01' });
    // Today's figures fixed at the whole day's: on the real clock they grow from none at midnight.
    const real = await startSandbox({ liveToday: false });
    try {
      const days = async (target: Sandbox) =>
        (await call<StatPage>(target, statsPath(1, 'visitor', '2000-01-01', '2100-01-01', { sort_by: 'value', per_page: '100' }))).body;
      const pinnedDays = await days(pinned);
      expect(pinnedDays.meta.total).toBe(1100);
      expect(pinnedDays.data[0]?.value).toBe('2026-01-01');
      expect((await days(real)).data[0]?.value).toBe(new Date().toISOString().slice(0, 10));
      const created = (await call<{ data: { created_at: string } }>(pinned, '/api/v1/websites/1')).body.data.created_at;
      expect(created.slice(0, 10)).toBe('2022-09-19'); // 1200 days before 2026-01-01
    } finally {
      await Promise.all([pinned.close(), real.close()]);
    }
  });
});
