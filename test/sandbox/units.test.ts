// The pure pieces, tested directly: calendar dates, domain rules, the paginator, the rate
// limiter's window and the stats range sums.
import { describe, expect, it } from 'vitest';
import { formatYmd, laravelTimestamp, parseYmd } from '../../src/sandbox/calendar.js';
import { paginate } from '../../src/sandbox/pagination.js';
import { RateLimiter } from '../../src/sandbox/rate-limiter.js';
import { HOURS, RECENT_DAYS, WINDOW_DAYS, apportion, generateTraffic } from '../../src/sandbox/demo-traffic.js';
import type { TrafficProfile } from '../../src/sandbox/demo-traffic.js';
import { seededRandom } from '../../src/sandbox/random.js';
import { LabelSeriesBuilder, dailySeries } from '../../src/sandbox/stat-series.js';
import type { StatRange, StatRow } from '../../src/sandbox/stat-series.js';
import { isValidDomain, normaliseDomain, readPage } from '../../src/sandbox/validation.js';

describe('calendar', () => {
  it('accepts real Y-m-d dates only', () => {
    expect(parseYmd('2024-02-29')).not.toBeNull();
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-3-1', '20260301', '2026-03-01T00:00', ' 2026-03-01']) {
      expect(parseYmd(bad), bad).toBeNull();
    }
    const day = parseYmd('2026-03-15') as number;
    expect(formatYmd(day)).toBe('2026-03-15');
    expect(formatYmd(day - 119)).toBe('2025-11-16');
  });

  it('formats timestamps with microseconds like Laravel', () => {
    expect(laravelTimestamp(Date.UTC(2024, 4, 1, 10, 0, 0, 123))).toBe('2024-05-01T10:00:00.123000Z');
  });
});

describe('domains', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['https://www.example.com/', 'example.com'],
    ['http://shop.example.co.uk/path?q=1#top', 'shop.example.co.uk'],
    ['  www.Blog.Example.org  ', 'blog.example.org'],
    ['www2.example.com', 'www2.example.com'],
  ])('normalises %s to %s', (raw, expected) => {
    expect(normaliseDomain(raw)).toBe(expected);
  });

  it('accepts domain names and IPv4, nothing else', () => {
    for (const good of ['example.com', 'a.b.c.example.io', 'xn--bcher-kva.example', 'my-site.dev', '192.0.2.1', '255.255.255.255']) {
      expect(isValidDomain(good), good).toBe(true);
    }
    for (const bad of [
      'localhost',
      'example',
      '-bad.com',
      'bad-.com',
      'exa mple.com',
      '256.1.1.1',
      '1.2.3',
      'example.com:80',
      'example..com',
      'ex_ample.com',
      '',
    ]) {
      expect(isValidDomain(bad), bad).toBe(false);
    }
  });
});

describe('paginate', () => {
  const items = Array.from({ length: 23 }, (_, i) => i + 1);
  it('slices and describes a middle page', () => {
    const page = paginate(items, 2, 10, 'http://h/api/v1/websites');
    expect(page.data).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(page.meta).toEqual({
      current_page: 2,
      from: 11,
      last_page: 3,
      path: 'http://h/api/v1/websites',
      per_page: 10,
      to: 20,
      total: 23,
    });
    expect(page.links).toEqual({
      first: 'http://h/api/v1/websites?page=1',
      last: 'http://h/api/v1/websites?page=3',
      prev: 'http://h/api/v1/websites?page=1',
      next: 'http://h/api/v1/websites?page=3',
    });
  });

  it('keeps last_page at 1 for an empty list', () => {
    expect(paginate([], 1, 10, 'p').meta).toEqual({
      current_page: 1,
      from: null,
      last_page: 1,
      path: 'p',
      per_page: 10,
      to: null,
      total: 0,
    });
  });

  it('reads page leniently, like Laravel', () => {
    expect(readPage({ page: '3' })).toBe(3);
    for (const bad of ['0', '-2', 'x', '1.5', '']) expect(readPage({ page: bad }), bad).toBe(1);
    expect(readPage({})).toBe(1);
  });
});

describe('RateLimiter', () => {
  it('allows limit attempts per window per key, without counting refusals', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(2, 10_000, () => now);
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 0 });
    now += 2_500;
    expect(limiter.attempt('a')).toMatchObject({ allowed: false, remaining: 0, retryAfter: 8, resetAt: 1_010 });
    expect(limiter.attempt('b')).toMatchObject({ allowed: true, remaining: 1 });
    now += 7_500;
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('StatSeries', () => {
  it('sums any range from prefix sums, clipped to the window', () => {
    const builder = new LabelSeriesBuilder(100, 5);
    builder.column('a').splice(0, 5, 1, 2, 3, 4, 5);
    builder.column('b').splice(0, 5, 0, 0, 10, 0, 0);
    const series = builder.build();
    const rows = (fromDay: number, toDay: number) => series.rows({ fromDay, toDay, sortBy: 'count', sort: 'desc' });
    expect(rows(100, 104)).toEqual([
      { value: 'a', count: 15 },
      { value: 'b', count: 10 },
    ]);
    expect(rows(101, 102)).toEqual([
      { value: 'b', count: 10 },
      { value: 'a', count: 5 },
    ]);
    expect(rows(103, 200)).toEqual([{ value: 'a', count: 9 }]); // b has nothing there
    expect(rows(0, 99)).toEqual([]);
    expect(series.rows({ fromDay: 0, toDay: 999, sortBy: 'value', sort: 'desc', search: 'B' })).toEqual([{ value: 'b', count: 10 }]);
  });
});

describe('daily series', () => {
  it('gives the rows a plain sort would, in every order, searched and clipped', () => {
    const dates = Array.from({ length: 60 }, (_, d) => formatYmd(20_000 + d));
    const counts = dates.map((_, d) => (d % 7 === 3 ? 0 : (d * 37) % 5)); // many ties, some empty days
    const series = dailySeries(20_000, dates, counts);
    const byValue = (a: StatRow, b: StatRow) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
    for (const [fromDay, toDay] of [
      [19_990, 20_100],
      [20_010, 20_030],
      [20_059, 20_059],
      [20_100, 20_200],
    ] as const) {
      for (const sortBy of ['count', 'value'] as const) {
        for (const sort of ['asc', 'desc'] as const) {
          for (const search of [undefined, '-02-', '1']) {
            const range: StatRange = { fromDay, toDay, sortBy, sort, ...(search === undefined ? {} : { search }) };
            const sign = sort === 'asc' ? 1 : -1;
            const expected = dates
              .map((value, d) => ({ value, count: counts[d] as number, day: 20_000 + d }))
              .filter(
                (row) => row.count > 0 && row.day >= fromDay && row.day <= toDay && (search === undefined || row.value.includes(search)),
              )
              .map(({ value, count }) => ({ value, count }))
              .sort((a, b) => (sortBy === 'value' ? sign * byValue(a, b) : sign * (a.count - b.count) || byValue(a, b)));
            expect(series.rows(range), JSON.stringify(range)).toEqual(expected);
          }
        }
      }
    }
  });
});

describe('a day counted otherwise (today as it grows)', () => {
  const byValue = (a: StatRow, b: StatRow) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
  const plainSort = (rows: StatRow[], { sortBy, sort }: StatRange) => {
    const sign = sort === 'asc' ? 1 : -1;
    return rows.sort((a, b) => (sortBy === 'value' ? sign * byValue(a, b) : sign * (a.count - b.count) || byValue(a, b)));
  };
  const ranges = (first: number, last: number): StatRange[] =>
    [
      [first - 10, last + 10],
      [first + 10, first + 30],
      [last, last],
    ].flatMap(([fromDay, toDay]) =>
      (['count', 'value'] as const).flatMap((sortBy) =>
        (['asc', 'desc'] as const).flatMap((sort) =>
          [undefined, '1'].map(
            (search): StatRange => ({
              fromDay: fromDay as number,
              toDay: toDay as number,
              sortBy,
              sort,
              ...(search === undefined ? {} : { search }),
            }),
          ),
        ),
      ),
    );

  it('puts the day where its new count sorts, in a daily series, in every order', () => {
    const dates = Array.from({ length: 60 }, (_, d) => formatYmd(20_000 + d));
    const counts = dates.map((_, d) => (d % 7 === 3 ? 0 : (d * 37) % 5)); // many ties, some empty days
    const series = dailySeries(20_000, dates, counts);
    expect(series.countsOn(20_058)).toEqual(new Map([[dates[58], counts[58]]]));
    expect(series.countsOn(20_003)).toEqual(new Map()); // an empty day
    for (const [d, count] of [
      [59, 0],
      [59, 2],
      [59, 9],
      [20, 1],
      [20, 4],
      [3, 3], // an empty day gets a count
      [0, 0],
    ] as const) {
      const replaced = series.withDay(20_000 + d, new Map([[dates[d] as string, count]]));
      for (const range of ranges(20_000, 20_059)) {
        const expected = plainSort(
          dates
            .map((value, i) => ({ value, count: i === d ? count : (counts[i] as number), day: 20_000 + i }))
            .filter(
              (row) =>
                row.count > 0 &&
                row.day >= range.fromDay &&
                row.day <= range.toDay &&
                (range.search === undefined || row.value.includes(range.search)),
            )
            .map(({ value, count: n }) => ({ value, count: n })),
          range,
        );
        expect(replaced.rows(range), `day ${d} = ${count}, ${JSON.stringify(range)}`).toEqual(expected);
      }
      // The series itself is left as it was.
      expect(series.rows({ fromDay: 20_000 + d, toDay: 20_000 + d, sortBy: 'count', sort: 'asc' })).toEqual(
        (counts[d] as number) > 0 ? [{ value: dates[d], count: counts[d] }] : [],
      );
    }
  });

  it('replaces the day in a label series, its other days and values as they were', () => {
    const builder = new LabelSeriesBuilder(100, 5);
    builder.column('a').splice(0, 5, 1, 2, 3, 4, 5);
    builder.column('b').splice(0, 5, 0, 0, 10, 0, 7);
    builder.column('c1').splice(0, 5, 0, 0, 0, 0, 2);
    const series = builder.build();
    expect(series.countsOn(104)).toEqual(
      new Map([
        ['a', 5],
        ['b', 7],
        ['c1', 2],
      ]),
    );
    const replaced = series.withDay(
      104,
      new Map([
        ['a', 1],
        ['b', 3],
        ['unknown', 9],
      ]),
    );
    const rows = (fromDay: number, toDay: number, extra: Partial<StatRange> = {}) =>
      replaced.rows({ fromDay, toDay, sortBy: 'count', sort: 'desc', ...extra });
    expect(rows(104, 104)).toEqual([
      { value: 'b', count: 3 },
      { value: 'a', count: 1 },
    ]);
    expect(rows(100, 104)).toEqual([
      { value: 'b', count: 13 },
      { value: 'a', count: 11 },
    ]);
    expect(rows(100, 103)).toEqual(series.rows({ fromDay: 100, toDay: 103, sortBy: 'count', sort: 'desc' }));
    expect(rows(0, 999, { search: 'C', sortBy: 'value', sort: 'asc' })).toEqual([]);
    expect(series.rows({ fromDay: 104, toDay: 104, sortBy: 'value', sort: 'asc' })).toEqual([
      { value: 'a', count: 5 },
      { value: 'b', count: 7 },
      { value: 'c1', count: 2 },
    ]);
  });
});

describe('demo traffic', () => {
  const profile: TrafficProfile = {
    visitors: 300,
    pagesPerVisit: 2.5,
    weekendFactor: 0.6,
    trend: 0.3,
    pages: ['/', '/about', '/pricing'],
    events: ['signup::'],
    campaigns: ['launch'],
  };
  const today = parseYmd('2026-03-15') as number;
  const firstDay = today - (WINDOW_DAYS - 1);
  const dates = Array.from({ length: WINDOW_DAYS }, (_, d) => formatYmd(firstDay + d));
  const all = { sortBy: 'value', sort: 'asc' } as const;
  const sum = (rows: StatRow[]) => rows.reduce((acc, row) => acc + row.count, 0);

  it('spans the 1100 days ending today for a website older than that', () => {
    expect([WINDOW_DAYS, RECENT_DAYS]).toEqual([1100, 120]);
    const series = generateTraffic(profile, seededRandom(42), firstDay, dates, (firstDay - 10) * 86_400_000);
    expect(series.get('visitor')?.rows({ fromDay: 0, toDay: today + 10, ...all })).toHaveLength(1100);
  });

  it('starts on the creation day of a website created within the recent days, from its creation hour', () => {
    const createdDay = today - 30;
    const series = generateTraffic(profile, seededRandom(42), firstDay, dates, createdDay * 86_400_000 + 15.5 * 3_600_000);
    for (const [name, stat] of series) expect(stat.rows({ fromDay: firstDay, toDay: createdDay - 1, ...all }), name).toEqual([]);
    expect(series.get('visitor')?.rows({ fromDay: firstDay, toDay: today, ...all })).toHaveLength(31);
    const day = { fromDay: createdDay, toDay: createdDay, ...all };
    for (const [hours, daily] of [
      ['visitors_hours', 'visitor'],
      ['pageviews_hours', 'pageview'],
    ] as const) {
      const rows = series.get(hours)?.rows(day) ?? [];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((row) => row.value >= '15' && HOURS.includes(row.value))).toBe(true);
      expect(sum(rows)).toBe(sum(series.get(daily)?.rows(day) ?? []));
    }
  });
});

describe('apportion', () => {
  it('never gives a share to a zero weight', () => {
    expect(apportion(5, [0, 1, 0, 1])).toEqual([0, 3, 0, 2]);
    expect(apportion(3, [0, 0, 1])).toEqual([0, 0, 3]);
  });
});
