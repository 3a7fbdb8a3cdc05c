// Dashboard analytics over real HTTP against the sandbox: periods resolved in the install's time zone
// and reported back (StatList.range), Website.series and Website.summary checked day by day against
// the sandbox's own REST rows (read here with fetch, every page), the readable values of a row
// (label, code, date, event, share) and StatList.sum, what each costs, and settled ranges through the
// cache. Series, summaries and values run against both dialects of the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_DAYS } from '../../src/sandbox/demo-traffic.js';
import {
  KEY_1,
  TODAY,
  dataOf,
  firstError,
  present,
  restCalls,
  startStack,
  useStack,
  type GraphQLResponse,
  type Stack,
} from '../fixture.js';

type Dialect = 'contract' | 'legacy';

/** The gateway's clock: midday of the sandbox's today, so that periods resolve around it. */
const NOON = Date.parse(`${TODAY}T12:00:00Z`);
const PINNED = { now: () => NOON };

// ---- Calendar days, written here independently of src/analytics -------------------------------

const DAY_MS = 86_400_000;
const msOf = (day: string): number => Date.parse(`${day}T00:00:00Z`);
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const plusDays = (day: string, days: number): string => dayOf(msOf(day) + days * DAY_MS);
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = msOf(from); ms <= msOf(to); ms += DAY_MS) days.push(dayOf(ms));
  return days;
}
const isMonday = (day: string): boolean => new Date(msOf(day)).getUTCDay() === 1;
const isFirstOfMonth = (day: string): boolean => day.endsWith('-01');

/** The sandbox's days with statistics end today; the oldest demo website has them all. */
const FIRST_DATA_DAY = plusDays(TODAY, 1 - WINDOW_DAYS);
/** A year of data (365 days to today) when the sandbox has it; else the longest range it has. */
const HAS_A_YEAR = WINDOW_DAYS >= 365;
const LONG = HAS_A_YEAR ? { from: plusDays(TODAY, -364), to: TODAY } : { from: FIRST_DATA_DAY, to: TODAY };
const LONG_DAYS = daysOf(LONG.from, LONG.to).length;
const LONG_PAGES = Math.ceil(LONG_DAYS / 100);
/** PREVIOUS_YEAR of a 30-day range ending today needs data a year and 30 days back. */
const HAS_A_YEAR_BEFORE_LAST_30 = WINDOW_DAYS >= 365 + 30;

// ---- What the REST API itself answers ------------------------------------------------------------

interface RestRow {
  value: string;
  count: number;
}
/** Both envelopes: the contract's resource collection (meta) and the older install's plain paginator. */
interface RestPage {
  data: RestRow[];
  meta?: { last_page: number };
  last_page?: number;
}
const LEGACY_WIRE: Partial<Record<string, string>> = { visitor: 'visitors', pageview: 'pageviews' };

/** Every row of a statistic, every page read, straight from the sandbox's REST API. */
async function restRows(stack: Stack, dialect: Dialect, websiteId: string, name: string, from: string, to: string): Promise<RestRow[]> {
  const wireName = dialect === 'legacy' ? (LEGACY_WIRE[name] ?? name) : name;
  const rows: RestRow[] = [];
  for (let page = 1, lastPage = 1; page <= lastPage; page++) {
    const params = new URLSearchParams({ name: wireName, from, to, per_page: '100', page: String(page) });
    const url = `${stack.sandbox.url}/api/v1/stats/${websiteId}?${params.toString()}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${KEY_1}`, accept: 'application/json' } });
    expect(response.status, url).toBe(200);
    const body = (await response.json()) as RestPage;
    rows.push(...body.data);
    lastPage = body.meta?.last_page ?? body.last_page ?? 1;
  }
  // One row per value: the pages neither overlap nor miss a row.
  expect(new Set(rows.map((row) => row.value)).size).toBe(rows.length);
  return rows;
}

const sumOf = (rows: readonly { count: number }[]): number => rows.reduce((sum, row) => sum + row.count, 0);

interface Point {
  date: string;
  count: number;
}

/** Every day of the range with its REST row's count, 0 for a day without a row. */
function dailyOf(rows: readonly RestRow[], from: string, to: string): Point[] {
  const byDay = new Map(rows.map((row) => [row.value, row.count]));
  return daysOf(from, to).map((date) => ({ date, count: byDay.get(date) ?? 0 }));
}

/** Consecutive days summed, a new bucket starting on the range's first day and wherever `starts` says. */
function bucketsOf(daily: readonly Point[], starts: (day: string) => boolean): Point[] {
  const buckets: Point[] = [];
  for (const point of daily) {
    const last = buckets[buckets.length - 1];
    if (last === undefined || starts(point.date)) buckets.push({ ...point });
    else last.count += point.count;
  }
  return buckets;
}

// ---- GraphQL shapes -----------------------------------------------------------------------------

interface RangeData {
  from: string;
  to: string;
}
interface WebsiteResult<W> {
  website: W | null;
}
interface SeriesData {
  metric: 'VISITORS' | 'PAGEVIEWS';
  interval: 'DAY' | 'WEEK' | 'MONTH';
  total: number;
  points: Point[];
  range: RangeData;
}
interface TotalsData {
  range: RangeData;
  visitors: number;
  pageviews: number;
}
interface SummaryData {
  current: TotalsData;
  previous: TotalsData | null;
  visitorsChange: number | null;
  pageviewsChange: number | null;
}
interface StatData {
  value: string;
  count: number;
  label: string;
  code: string | null;
  date: string | null;
  event: { name: string; value: string | null; unit: string | null } | null;
  share: number | null;
}
interface StatListData {
  totalCount: number;
  sum: number;
  range: RangeData;
  nodes: StatData[];
}
interface WebsitesData {
  websites: { nodes: { id: string; domain: string; createdAt: string | null }[] };
}
interface CostExtensions {
  cost?: { requested: number | null; limit: number };
  upstreamCalls?: number;
  cache?: { hits: number; misses: number; stale: number };
}

const websiteOf = <W>(response: GraphQLResponse<WebsiteResult<W>>): W => present(dataOf(response).website, 'website');
const extensionsOf = (response: GraphQLResponse<unknown>): CostExtensions => (response.extensions ?? {}) as CostExtensions;
const statsCalls = (stack: Stack): string[] => restCalls(stack.sandbox).filter((call) => call.startsWith('GET /api/v1/stats/'));

const SERIES = `query($id: ID!, $metric: SeriesMetric!, $from: Date, $to: Date, $period: Period, $interval: Interval) {
  website(id: $id) { series(metric: $metric, from: $from, to: $to, period: $period, interval: $interval) {
    metric interval total points { date count } range { from to } } } }`;
const SUMMARY = `query($id: ID!, $from: Date, $to: Date, $period: Period, $compare: Comparison) {
  website(id: $id) { summary(from: $from, to: $to, period: $period, compare: $compare) {
    current { range { from to } visitors pageviews } previous { range { from to } visitors pageviews }
    visitorsChange pageviewsChange } } }`;
const STAT_LIST = `query($id: ID!, $name: StatName!, $from: Date, $to: Date, $perPage: Int, $page: Int) {
  website(id: $id) { stats(name: $name, from: $from, to: $to, perPage: $perPage, page: $page) {
    totalCount sum range { from to } nodes { value count label code date event { name value unit } share } } } }`;

interface DemoSites {
  /** acme-analytics.com: the oldest, statistics on every day of the sandbox's window. */
  oldest: string;
  /** 198.51.100.42: the youngest, created inside the window. */
  youngest: string;
  youngestCreated: string;
  all: string[];
}

async function demoSites(stack: Stack): Promise<DemoSites> {
  const { nodes } = dataOf(await stack.gql<WebsitesData>('{ websites(perPage: 100) { nodes { id domain createdAt } } }')).websites;
  const byDomain = (domain: string) =>
    present(
      nodes.find((node) => node.domain === domain),
      domain,
    );
  const youngest = byDomain('198.51.100.42');
  return {
    oldest: byDomain('acme-analytics.com').id,
    youngest: youngest.id,
    youngestCreated: present(youngest.createdAt, 'createdAt').slice(0, 10),
    all: nodes.map((node) => node.id),
  };
}

// ---- Periods ------------------------------------------------------------------------------------

describe('periods', () => {
  const stack = useStack({ gateway: PINNED });
  let sites: DemoSites;
  beforeAll(async () => {
    sites = await demoSites(stack);
  });

  /** Every Period on 2026-03-15 (UTC), written out by hand. */
  const ON_TODAY: Record<string, RangeData> = {
    TODAY: { from: '2026-03-15', to: '2026-03-15' },
    YESTERDAY: { from: '2026-03-14', to: '2026-03-14' },
    LAST_7_DAYS: { from: '2026-03-09', to: '2026-03-15' },
    LAST_30_DAYS: { from: '2026-02-14', to: '2026-03-15' },
    LAST_90_DAYS: { from: '2025-12-16', to: '2026-03-15' },
    LAST_365_DAYS: { from: '2025-03-16', to: '2026-03-15' },
    THIS_MONTH: { from: '2026-03-01', to: '2026-03-15' },
    LAST_MONTH: { from: '2026-02-01', to: '2026-02-28' },
    THIS_YEAR: { from: '2026-01-01', to: '2026-03-15' },
    LAST_YEAR: { from: '2025-01-01', to: '2025-12-31' },
  };

  it('every Period resolves as documented: StatList.range reports it, and it is the range sent upstream', async () => {
    const fields = Object.keys(ON_TODAY).map((period) => `${period}: stats(name: VISITOR, period: ${period}) { range { from to } }`);
    const response = await stack.gql<WebsiteResult<Record<string, { range: RangeData }>>>(
      `{ website(id: "${sites.oldest}") { ${fields.join('\n')} } }`,
    );
    const website = websiteOf(response);
    const sent = stack.sandbox.log.entries.filter((entry) => entry.path.startsWith('/api/v1/stats/'));
    for (const [period, range] of Object.entries(ON_TODAY)) {
      expect(website[period]?.range, period).toEqual(range);
      expect(
        sent.some((entry) => entry.query.from === range.from && entry.query.to === range.to),
        period,
      ).toBe(true);
    }
    // Each "last N days" has N days, today included.
    expect(daysOf('2025-03-16', TODAY)).toHaveLength(365);
    expect(daysOf('2025-12-16', TODAY)).toHaveLength(90);
  });

  it('Query.stats, Website.series and Website.summary take a period alike', async () => {
    const stats = dataOf(
      await stack.gql<{ stats: { range: RangeData } }>(
        `{ stats(websiteId: "${sites.oldest}", name: COUNTRY, period: LAST_30_DAYS) { range { from to } } }`,
      ),
    ).stats;
    expect(stats.range).toEqual({ from: '2026-02-14', to: '2026-03-15' });
    const series = websiteOf(
      await stack.gql<WebsiteResult<{ series: SeriesData }>>(SERIES, { id: sites.oldest, metric: 'VISITORS', period: 'LAST_30_DAYS' }),
    ).series;
    expect(series.range).toEqual({ from: '2026-02-14', to: '2026-03-15' });
    expect(series.points.map((point) => point.date)).toEqual(daysOf('2026-02-14', '2026-03-15'));
    const summary = websiteOf(
      await stack.gql<WebsiteResult<{ summary: SummaryData }>>(SUMMARY, { id: sites.oldest, period: 'LAST_MONTH' }),
    ).summary;
    expect(summary.current.range).toEqual({ from: '2026-02-01', to: '2026-02-28' });
  });

  it('from + to still works, and an explicit null period is no period', async () => {
    const query = `query($period: Period) { stats(websiteId: "${sites.oldest}", name: PAGE, from: "2026-01-05", to: "2026-02-10", period: $period) { range { from to } } }`;
    for (const variables of [{}, { period: null }]) {
      const stats = dataOf(await stack.gql<{ stats: { range: RangeData } }>(query, variables)).stats;
      expect(stats.range).toEqual({ from: '2026-01-05', to: '2026-02-10' });
    }
    const calls = statsCalls(stack);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.includes('from=2026-01-05') && call.includes('to=2026-02-10'))).toBe(true);
  });

  const REFUSED: [string, string, string, string][] = [
    [
      'period with from and to',
      'period: LAST_7_DAYS, from: "2026-03-01", to: "2026-03-02"',
      'period',
      'Give either period or from and to, not both: got period LAST_7_DAYS with from 2026-03-01 and to 2026-03-02.',
    ],
    [
      'period with from only',
      'period: LAST_7_DAYS, from: "2026-03-01"',
      'period',
      'Give either period or from and to, not both: got period LAST_7_DAYS with from 2026-03-01.',
    ],
    [
      'period with to only',
      'period: LAST_7_DAYS, to: "2026-03-01"',
      'period',
      'Give either period or from and to, not both: got period LAST_7_DAYS with to 2026-03-01.',
    ],
    ['neither', '', 'from', 'Give a period, or from and to: got none of them.'],
    ['from only', 'from: "2026-03-01"', 'to', 'Give both from and to (or a period): got from 2026-03-01 and no to.'],
    ['to only', 'to: "2026-03-01"', 'from', 'Give both from and to (or a period): got to 2026-03-01 and no from.'],
  ];

  it.each(REFUSED)('%s: BAD_USER_INPUT naming the argument, no upstream call (Query.stats)', async (_what, args, argument, message) => {
    const response = await stack.gql<{ stats: { totalCount: number } }>(
      `{ stats(websiteId: "${sites.oldest}", name: PAGE${args ? `, ${args}` : ''}) { totalCount } }`,
    );
    expect(response.errors).toHaveLength(1);
    const error = firstError(response);
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument, field: 'stats' });
    expect(error.message).toBe(`stats: ${message}`);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it.each(REFUSED)(
    '%s: the same on Website.series, Website.stats and Website.summary, with no upstream call',
    async (_what, args, argument, message) => {
      const comma = args ? `, ${args}` : '';
      for (const [name, field] of [
        ['series', `series(metric: VISITORS${comma}) { total }`],
        ['stats', `stats(name: PAGE${comma}) { totalCount }`],
        ['summary', `summary${args ? `(${args})` : ''} { current { visitors } }`],
      ]) {
        const response = await stack.gql<WebsiteResult<Record<string, unknown>>>(`{ website(id: "${sites.oldest}") { ${field} } }`);
        expect(response.errors, field).toHaveLength(1);
        const error = firstError(response);
        expect(error.extensions, field).toMatchObject({ code: 'BAD_USER_INPUT', argument, field: `website.${name}` });
        expect(error.message, field).toBe(`website.${name}: ${message}`);
      }
      // Refused before any resolver: not even the website is read.
      expect(stack.sandbox.log.count).toBe(0);
    },
  );

  describe.each([
    // Tokyo is UTC+9: 15:30 UTC on the 15th is half past midnight on the 16th there.
    { timeZone: 'Asia/Tokyo', at: '2026-03-15T15:30:00Z', today: '2026-03-16' },
    // Los Angeles is UTC-7 in March (daylight saving from 8 March): 06:30 UTC on the 15th is 23:30 on the 14th there.
    { timeZone: 'America/Los_Angeles', at: '2026-03-15T06:30:00Z', today: '2026-03-14' },
  ])('UPSTREAM_TIMEZONE $timeZone at $at', ({ timeZone, at, today }) => {
    let zoned: Stack;
    let utc: Stack;
    let clock = Date.parse(at);
    beforeAll(async () => {
      zoned = await startStack({ env: { UPSTREAM_TIMEZONE: timeZone }, gateway: { now: () => clock } });
      utc = await startStack({ gateway: { now: () => clock } });
    });
    afterAll(async () => {
      await zoned.close();
      await utc.close();
    });

    const rangeOf = async (target: Stack, period: string): Promise<RangeData> =>
      dataOf(
        await target.gql<{ stats: { range: RangeData } }>(
          `{ stats(websiteId: "${sites.oldest}", name: VISITOR, period: ${period}) { range { from to } } }`,
        ),
      ).stats.range;

    it(`"today" is ${today} there, where UTC says 2026-03-15; the range sent upstream moves with it`, async () => {
      clock = Date.parse(at);
      expect(await rangeOf(utc, 'TODAY')).toEqual({ from: TODAY, to: TODAY });
      expect(await rangeOf(zoned, 'TODAY')).toEqual({ from: today, to: today });
      expect(await rangeOf(zoned, 'LAST_30_DAYS')).toEqual({ from: plusDays(today, -29), to: today });
      zoned.sandbox.log.reset();
      const series = websiteOf(
        await zoned.gql<WebsiteResult<{ series: SeriesData }>>(SERIES, { id: sites.oldest, metric: 'VISITORS', period: 'LAST_7_DAYS' }),
      ).series;
      expect(series.range).toEqual({ from: plusDays(today, -6), to: today });
      expect(series.points.map((point) => point.date)).toEqual(daysOf(plusDays(today, -6), today));
      const calls = statsCalls(zoned);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((call) => call.includes(`from=${plusDays(today, -6)}`) && call.includes(`to=${today}`))).toBe(true);
    });

    it("near midnight at a month's end, the months move too", async () => {
      // Tokyo: 00:30 on 1 March while UTC is still on 28 February. Los Angeles: 23:30 on 28 February
      // while UTC is on 1 March.
      clock = Date.parse(timeZone === 'Asia/Tokyo' ? '2026-02-28T15:30:00Z' : '2026-03-01T07:30:00Z');
      const zonedToday = timeZone === 'Asia/Tokyo' ? '2026-03-01' : '2026-02-28';
      const utcToday = timeZone === 'Asia/Tokyo' ? '2026-02-28' : '2026-03-01';
      const months = (day: string): Record<string, RangeData> =>
        day === '2026-03-01'
          ? { THIS_MONTH: { from: '2026-03-01', to: '2026-03-01' }, LAST_MONTH: { from: '2026-02-01', to: '2026-02-28' } }
          : { THIS_MONTH: { from: '2026-02-01', to: '2026-02-28' }, LAST_MONTH: { from: '2026-01-01', to: '2026-01-31' } };
      for (const [target, day] of [
        [zoned, zonedToday],
        [utc, utcToday],
      ] as const) {
        for (const [period, range] of Object.entries(months(day)))
          expect(await rangeOf(target, period), `${period} on ${day}`).toEqual(range);
        expect(await rangeOf(target, 'YESTERDAY')).toEqual({ from: plusDays(day, -1), to: plusDays(day, -1) });
      }
    });
  });
});

// ---- Series, summaries and readable values, on both dialects ---------------------------------------

describe.each<Dialect>(['contract', 'legacy'])('against the %s dialect', (dialect) => {
  const stack = useStack({ sandbox: { dialect }, gateway: PINNED });
  let sites: DemoSites;
  const restCache = new Map<string, Promise<RestRow[]>>();
  /** REST rows, read once per statistic and range (the sandbox's data does not change). */
  const rest = (websiteId: string, name: string, from: string, to: string): Promise<RestRow[]> => {
    const key = `${websiteId}/${name}/${from}/${to}`;
    let rows = restCache.get(key);
    if (rows === undefined) {
      rows = restRows(stack, dialect, websiteId, name, from, to);
      restCache.set(key, rows);
    }
    return rows;
  };
  const series = async (variables: Record<string, unknown>): Promise<SeriesData> =>
    websiteOf(await stack.gql<WebsiteResult<{ series: SeriesData }>>(SERIES, variables)).series;
  const summary = async (variables: Record<string, unknown>): Promise<SummaryData> =>
    websiteOf(await stack.gql<WebsiteResult<{ summary: SummaryData }>>(SUMMARY, variables)).summary;
  const totals = async (websiteId: string, from: string, to: string): Promise<TotalsData> => ({
    range: { from, to },
    visitors: sumOf(await rest(websiteId, 'visitor', from, to)),
    pageviews: sumOf(await rest(websiteId, 'pageview', from, to)),
  });

  beforeAll(async () => {
    sites = await demoSites(stack);
    // The gateway learns this install's names for the daily statistics once (the older one refuses
    // `visitor` and `pageview`): done here, so that the tests count only the calls they cause.
    await summary({ id: sites.oldest, period: 'TODAY' });
  });

  describe('Website.series', () => {
    it.each([
      ['VISITORS', 'visitor'],
      ['PAGEVIEWS', 'pageview'],
    ] as const)('%s by DAY: the REST rows day by day, oldest first, total their sum', async (metric, name) => {
      const [from, to] = ['2026-01-10', TODAY];
      const daily = dailyOf(await rest(sites.oldest, name, from, to), from, to);
      const got = await series({ id: sites.oldest, metric, from, to });
      expect(got).toEqual({ metric, interval: 'DAY', range: { from, to }, points: daily, total: sumOf(daily) });
      expect(got.total).toBeGreaterThan(0);
    });

    it('zero for the days without a row: a range that starts before the website was created', async () => {
      const from = plusDays(sites.youngestCreated, -14);
      const to = plusDays(sites.youngestCreated, 15);
      const rows = await rest(sites.youngest, 'visitor', from, to);
      const daily = dailyOf(rows, from, to);
      const got = await series({ id: sites.youngest, metric: 'VISITORS', from, to });
      expect(got.points).toEqual(daily);
      expect(got.points).toHaveLength(30);
      expect(rows.length).toBeLessThan(30);
      // Nothing before its creation day.
      for (const point of got.points.slice(0, 14)) expect(point).toEqual({ date: point.date, count: 0 });
      expect(got.total).toBe(sumOf(rows));
    });

    it.each([
      ['VISITORS', 'visitor'],
      ['PAGEVIEWS', 'pageview'],
    ] as const)("%s by WEEK: ISO weeks from Monday, the first dated by the range's first day", async (metric, name) => {
      // 7 January 2026 is a Wednesday; 15 March a Sunday.
      const [from, to] = ['2026-01-07', TODAY];
      const daily = dailyOf(await rest(sites.oldest, name, from, to), from, to);
      const got = await series({ id: sites.oldest, metric, from, to, interval: 'WEEK' });
      const expected = bucketsOf(daily, isMonday);
      expect(got.points).toEqual(expected);
      expect(got.points.map((point) => point.date)).toEqual([
        '2026-01-07',
        '2026-01-12',
        '2026-01-19',
        '2026-01-26',
        '2026-02-02',
        '2026-02-09',
        '2026-02-16',
        '2026-02-23',
        '2026-03-02',
        '2026-03-09',
      ]);
      expect(got.interval).toBe('WEEK');
      expect(got.total).toBe(sumOf(daily));
    });

    it.each([
      ['VISITORS', 'visitor'],
      ['PAGEVIEWS', 'pageview'],
    ] as const)("%s by MONTH: calendar months, the first dated by the range's first day", async (metric, name) => {
      const [from, to] = ['2025-12-10', TODAY];
      const daily = dailyOf(await rest(sites.oldest, name, from, to), from, to);
      const got = await series({ id: sites.oldest, metric, from, to, interval: 'MONTH' });
      expect(got.points).toEqual(bucketsOf(daily, isFirstOfMonth));
      expect(got.points.map((point) => point.date)).toEqual(['2025-12-10', '2026-01-01', '2026-02-01', '2026-03-01']);
      expect(got.total).toBe(sumOf(daily));
    });

    it(`${LONG_DAYS} days (${LONG.from} to ${LONG.to}): ${LONG_PAGES} upstream pages of 100 rows, those after the first in parallel`, async () => {
      const daily = dailyOf(await rest(sites.oldest, 'visitor', LONG.from, LONG.to), LONG.from, LONG.to);
      expect(daily.every((point) => point.count > 0)).toBe(true); // the oldest website has a row every day
      stack.sandbox.setKnobs({ latencyMs: 40 });
      stack.sandbox.log.reset();
      try {
        const response = await stack.gql<WebsiteResult<{ series: SeriesData }>>(SERIES, { id: sites.oldest, metric: 'VISITORS', ...LONG });
        const got = websiteOf(response).series;
        expect(got.points).toEqual(daily);
        expect(got.total).toBe(sumOf(daily));
        const pages = stack.sandbox.log.entries.filter((entry) => entry.path === `/api/v1/stats/${sites.oldest}`);
        expect(pages.map((entry) => Number(entry.query.page)).sort((a, b) => a - b)).toEqual(
          Array.from({ length: LONG_PAGES }, (_, i) => i + 1),
        );
        const name = dialect === 'legacy' ? 'visitors' : 'visitor'; // what this install calls it, learned
        for (const entry of pages)
          expect(entry.query).toMatchObject({ name, from: LONG.from, to: LONG.to, per_page: '100', sort_by: 'value', sort: 'asc' });
        expect(extensionsOf(response).upstreamCalls).toBe(1 + LONG_PAGES);
        // The first page says how many there are; the others are read together.
        const [first, ...others] = pages;
        expect(first?.query.page).toBe('1');
        const firstEnded = present(first?.endedAt, "the first page's end");
        for (const entry of others) expect(entry.startedAt).toBeGreaterThanOrEqual(firstEnded);
        expect(stack.sandbox.log.maxInFlight).toBe(Math.max(1, LONG_PAGES - 1));
        if (LONG_PAGES > 2) expect(stack.sandbox.log.maxInFlight).toBeGreaterThan(1);
      } finally {
        stack.sandbox.setKnobs({ latencyMs: 0 });
      }
    });

    it("the sparkline list: every website's last 7 days", async () => {
      type ListData = { websites: { nodes: { id: string; series: { points: { count: number }[] } }[] } };
      const response = await stack.gql<ListData>(
        '{ websites { nodes { id series(metric: VISITORS, period: LAST_7_DAYS) { points { count } } } } }',
      );
      const { nodes } = dataOf(response).websites;
      expect(nodes.map((node) => node.id).sort()).toEqual([...sites.all].sort());
      const from = plusDays(TODAY, -6);
      for (const node of nodes) {
        const daily = dailyOf(await rest(node.id, 'visitor', from, TODAY), from, TODAY);
        expect(node.series.points, node.id).toEqual(daily.map(({ count }) => ({ count })));
      }
      expect(extensionsOf(response).cost?.requested).toBe(1 + 10);
    });
  });

  describe('Website.summary', () => {
    it('current totals are the sums of the REST rows; no comparison: previous and changes null', async () => {
      const [from, to] = ['2026-01-20', '2026-03-10'];
      const current = await totals(sites.oldest, from, to);
      stack.sandbox.log.reset();
      const got = await summary({ id: sites.oldest, from, to });
      expect(got).toEqual({ current, previous: null, visitorsChange: null, pageviewsChange: null });
      expect(got.current.pageviews).toBeGreaterThan(got.current.visitors);
      // Both daily statistics, under this install's names: one page each (51 days).
      const names = stack.sandbox.log.entries.filter((entry) => entry.path.startsWith('/api/v1/stats/')).map((entry) => entry.query.name);
      expect(names.sort()).toEqual(dialect === 'legacy' ? ['pageviews', 'visitors'] : ['pageview', 'visitor']);
    });

    it('PREVIOUS_PERIOD: the same number of days just before', async () => {
      // LAST_MONTH is February 2026 (28 days): compared with the 28 days before it, not with January.
      const got = await summary({ id: sites.oldest, period: 'LAST_MONTH', compare: 'PREVIOUS_PERIOD' });
      const current = await totals(sites.oldest, '2026-02-01', '2026-02-28');
      const previous = await totals(sites.oldest, '2026-01-04', '2026-01-31');
      expect(got.current).toEqual(current);
      expect(got.previous).toEqual(previous);
      expect(previous.visitors).toBeGreaterThan(0);
      expect(got.visitorsChange).toBeCloseTo((current.visitors - previous.visitors) / previous.visitors, 12);
      expect(got.pageviewsChange).toBeCloseTo((current.pageviews - previous.pageviews) / previous.pageviews, 12);
    });

    it.runIf(HAS_A_YEAR_BEFORE_LAST_30)('PREVIOUS_YEAR: the same dates a year earlier, changes over the days that are over', async () => {
      const got = await summary({ id: sites.oldest, period: 'LAST_30_DAYS', compare: 'PREVIOUS_YEAR' });
      const current = await totals(sites.oldest, '2026-02-14', '2026-03-15');
      const previous = await totals(sites.oldest, '2025-02-14', '2025-03-15');
      expect(got.current).toEqual(current);
      expect(got.previous).toEqual(previous);
      // The range reaches today (2026-03-15), not over: its first 29 days against the same 29 a year earlier.
      const [over, before] = [
        await totals(sites.oldest, '2026-02-14', '2026-03-14'),
        await totals(sites.oldest, '2025-02-14', '2025-03-14'),
      ];
      expect(before.visitors).toBeGreaterThan(0);
      expect(got.visitorsChange).toBeCloseTo((over.visitors - before.visitors) / before.visitors, 12);
      expect(got.pageviewsChange).toBeCloseTo((over.pageviews - before.pageviews) / before.pageviews, 12);
    });

    it('a range not over (it reaches today): partial, its changes over the same part of each, and its points', async () => {
      const PARTIAL = `query($id: ID!, $period: Period, $compare: Comparison) {
        website(id: $id) { summary(period: $period, compare: $compare) {
          partial changeBasis { current { from to } previous { from to } } visitorsChange pageviewsChange
          current { points { date visitors pageviews } } previous { points { date visitors pageviews } } } } }`;
      type Point = { date: string; visitors: number; pageviews: number };
      type Partial = {
        partial: boolean;
        changeBasis: { current: RangeData; previous: RangeData } | null;
        visitorsChange: number | null;
        pageviewsChange: number | null;
        current: { points: Point[] };
        previous: { points: Point[] } | null;
      };
      const ask = async (period: string, compare: string) =>
        websiteOf(await stack.gql<WebsiteResult<{ summary: Partial }>>(PARTIAL, { id: sites.oldest, period, compare })).summary;

      // Today alone: nothing of it is over, so no change; shown as partial.
      const today = await ask('TODAY', 'PREVIOUS_PERIOD');
      expect(today).toMatchObject({ partial: true, changeBasis: null, visitorsChange: null, pageviewsChange: null });
      expect(today.current.points.map((point) => point.date)).toEqual(['2026-03-15']);
      expect(today.previous?.points.map((point) => point.date)).toEqual(['2026-03-14']);

      // This month (1 to 15 March): its 14 days over against the first 14 of the 15 days before it.
      const month = await ask('THIS_MONTH', 'PREVIOUS_PERIOD');
      expect(month.partial).toBe(true);
      expect(month.changeBasis).toEqual({
        current: { from: '2026-03-01', to: '2026-03-14' },
        previous: { from: '2026-02-14', to: '2026-02-27' },
      });
      const [over, before] = [
        await totals(sites.oldest, '2026-03-01', '2026-03-14'),
        await totals(sites.oldest, '2026-02-14', '2026-02-27'),
      ];
      expect(month.visitorsChange).toBeCloseTo((over.visitors - before.visitors) / before.visitors, 12);
      expect(month.pageviewsChange).toBeCloseTo((over.pageviews - before.pageviews) / before.pageviews, 12);
      // The points are the REST API's daily rows, every day present.
      const daily = new Map((await rest(sites.oldest, 'visitor', '2026-03-01', '2026-03-15')).map((row) => [row.value, row.count]));
      expect(month.current.points.map((point) => [point.date, point.visitors])).toEqual(
        Array.from({ length: 15 }, (_, i) => plusDays('2026-03-01', i)).map((date) => [date, daily.get(date) ?? 0]),
      );
      expect(month.previous?.points).toHaveLength(15);

      // A range that is over: not partial, compared whole.
      const lastMonth = await ask('LAST_MONTH', 'PREVIOUS_PERIOD');
      expect(lastMonth.partial).toBe(false);
      expect(lastMonth.changeBasis).toEqual({
        current: { from: '2026-02-01', to: '2026-02-28' },
        previous: { from: '2026-01-04', to: '2026-01-31' },
      });
    });

    it('a previous period before the website was created counts 0, and the changes are null', async () => {
      // The youngest website's first 10 days, compared with the 10 days before its creation.
      const from = sites.youngestCreated;
      const to = plusDays(from, 9);
      const got = await summary({ id: sites.youngest, from, to, compare: 'PREVIOUS_PERIOD' });
      expect(got.current).toEqual(await totals(sites.youngest, from, to));
      if (WINDOW_DAYS > 150) expect(got.current.visitors).toBeGreaterThan(0); // created 150 days before today
      expect(got.previous).toEqual({ range: { from: plusDays(from, -10), to: plusDays(from, -1) }, visitors: 0, pageviews: 0 });
      expect(got.visitorsChange).toBeNull();
      expect(got.pageviewsChange).toBeNull();
    });
  });

  describe('readable values', () => {
    const [from, to] = ['2026-02-01', '2026-03-15'];
    const list = async (name: string, extra: Record<string, unknown> = {}): Promise<StatListData> =>
      websiteOf(
        await stack.gql<WebsiteResult<{ stats: StatListData }>>(STAT_LIST, { id: sites.oldest, name, from, to, perPage: 100, ...extra }),
      ).stats;

    /** Every row of the page is a REST row, its share is count / sum, and sum is over all REST rows. */
    async function checkSums(got: StatListData, wireName: string, range: RangeData = { from, to }): Promise<void> {
      const rows = await rest(sites.oldest, wireName, range.from, range.to);
      const byValue = new Map(rows.map((row) => [row.value, row.count]));
      expect(got.totalCount).toBe(rows.length);
      expect(got.sum).toBe(sumOf(rows));
      expect(got.range).toEqual(range);
      for (const node of got.nodes) {
        expect(node.count, node.value).toBe(byValue.get(node.value));
        expect(present(node.share, 'share')).toBeCloseTo(node.count / got.sum, 12);
      }
    }

    it('COUNTRY, CONTINENT, CITY: the name as label, the ISO code as code', async () => {
      for (const [name, wire] of [
        ['COUNTRY', 'country'],
        ['CONTINENT', 'continent'],
        ['CITY', 'city'],
      ] as const) {
        const got = await list(name);
        expect(got.nodes.length, name).toBeGreaterThan(0);
        for (const node of got.nodes) {
          const colon = node.value.indexOf(':');
          expect({ label: node.label, code: node.code, date: node.date, event: node.event }, node.value).toEqual({
            label: node.value.slice(colon + 1),
            code: node.value.slice(0, colon),
            date: null,
            event: null,
          });
        }
        // Every row on one page: the shares add up to 1.
        expect(got.nodes.reduce((sum, node) => sum + (node.share ?? 0), 0)).toBeCloseTo(1, 9);
        await checkSums(got, wire);
      }
      const country = (await list('COUNTRY')).nodes.find((node) => node.value === 'US:United States');
      expect(country).toMatchObject({ label: 'United States', code: 'US' });
      const continent = (await list('CONTINENT')).nodes.find((node) => node.value === 'NA:North America');
      expect(continent).toMatchObject({ label: 'North America', code: 'NA' });
      const city = (await list('CITY')).nodes.find((node) => node.value === 'BR:São Paulo');
      expect(city).toMatchObject({ label: 'São Paulo', code: 'BR' });
    });

    it("LANGUAGE: the language's English name from Intl, the code as code", async () => {
      const names = new Intl.DisplayNames(['en'], { type: 'language' });
      const got = await list('LANGUAGE');
      expect(got.nodes.length).toBeGreaterThan(0);
      for (const node of got.nodes)
        expect({ label: node.label, code: node.code }).toEqual({ label: names.of(node.value), code: node.value });
      expect(got.nodes.find((node) => node.value === 'en')).toMatchObject({ label: 'English', code: 'en' });
      expect(got.nodes.find((node) => node.value === 'de')).toMatchObject({ label: 'German', code: 'de' });
      await checkSums(got, 'language');
    });

    it('REFERRER: the host as label ("Direct" for an empty referrer), no code', async () => {
      const got = await list('REFERRER');
      expect(got.nodes.length).toBeGreaterThan(0);
      for (const node of got.nodes) {
        expect(node.label).toBe(node.value === '' ? 'Direct' : node.value);
        expect(node.code).toBeNull();
      }
      // The demo data has no empty referrer: "Direct" is proven by test/analytics/values.test.ts alone.
      expect(got.nodes.some((node) => node.value === '')).toBe(false);
      await checkSums(got, 'referrer');
    });

    it('EVENT: "name:value:unit" split, empty parts null, the name as label', async () => {
      const got = await list('EVENT');
      expect(got.nodes.length).toBeGreaterThan(0);
      for (const node of got.nodes) {
        const [name = '', value = '', unit = ''] = node.value.split(':');
        expect(node.label).toBe(name);
        expect(node.event).toEqual({ name, value: value || null, unit: unit || null });
      }
      const byValue = (value: string) =>
        present(
          got.nodes.find((node) => node.value === value),
          value,
        );
      expect(byValue('purchase:49:USD').event).toEqual({ name: 'purchase', value: '49', unit: 'USD' });
      expect(byValue('signup::').event).toEqual({ name: 'signup', value: null, unit: null });
      expect(byValue('newsletter:footer:').event).toEqual({ name: 'newsletter', value: 'footer', unit: null });
      await checkSums(got, 'event');
    });

    it('VISITOR: the day as date and label; other statistics have no date or event', async () => {
      const got = await list('VISITOR', { perPage: 10, page: 2 });
      expect(got.nodes).toHaveLength(10);
      for (const node of got.nodes) {
        expect(node.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect({ label: node.label, date: node.date, code: node.code, event: node.event }).toEqual({
          label: node.value,
          date: node.value,
          code: null,
          event: null,
        });
      }
      await checkSums(got, 'visitor');
      for (const node of (await list('BROWSER')).nodes)
        expect({ date: node.date, event: node.event, code: node.code }).toEqual({ date: null, event: null, code: null });
    });

    it('StatList.sum and share over every page: PAGE 10 rows a page, VISITOR over more than 100 rows', async () => {
      for (const page of [1, 2]) {
        const pages = await list('PAGE', { perPage: 10, page });
        expect(pages.totalCount).toBeGreaterThan(20);
        expect(pages.nodes).toHaveLength(10);
        await checkSums(pages, 'page');
      }

      // A daily statistic over the long range: the sum reads every upstream page of 100 rows.
      stack.sandbox.log.reset();
      const visitors = await list('VISITOR', { ...LONG, perPage: 10, page: 3 });
      expect(visitors.totalCount).toBe(LONG_DAYS);
      await checkSums(visitors, 'visitor', LONG);
      expect(visitors.sum).toBe((await series({ id: sites.oldest, metric: 'VISITORS', ...LONG })).total);
      const hundreds = stack.sandbox.log.entries.filter(
        (entry) => entry.path.startsWith('/api/v1/stats/') && entry.query.per_page === '100' && entry.query.sort_by === 'count',
      );
      expect(hundreds.map((entry) => Number(entry.query.page)).sort((a, b) => a - b)).toEqual(
        Array.from({ length: LONG_PAGES }, (_, i) => i + 1),
      );
    });
  });
});

// ---- Cost -----------------------------------------------------------------------------------------

describe('cost', () => {
  const stack = useStack({ gateway: PINNED });
  let sites: DemoSites;
  beforeAll(async () => {
    sites = await demoSites(stack);
  });

  const requested = async (query: string): Promise<number | null | undefined> => {
    const response = await stack.gql<unknown>(query);
    expect(response.errors).toBeUndefined();
    return extensionsOf(response).cost?.requested;
  };
  /** What the website read itself costs, counted out of each figure below. */
  const WEBSITE = 1;

  it('a series: the upstream pages its range can need, 100 days a page', async () => {
    expect(await requested(`{ website(id: "${sites.oldest}") { domain } }`)).toBe(WEBSITE);
    const cases: [string, number][] = [
      ['period: TODAY', 1],
      ['period: LAST_90_DAYS', 1],
      [`from: "${plusDays(TODAY, -99)}", to: "${TODAY}"`, 1],
      [`from: "${plusDays(TODAY, -100)}", to: "${TODAY}"`, 2],
      ['period: LAST_365_DAYS', 4],
      [`from: "${LONG.from}", to: "${LONG.to}"`, LONG_PAGES],
    ];
    for (const [range, pages] of cases) {
      const cost = await requested(
        `{ website(id: "${sites.oldest}") { series(metric: VISITORS, ${range}, interval: WEEK) { total points { date count } range { from } } } }`,
      );
      expect(cost, range).toBe(WEBSITE + pages);
    }
  });

  it('a summary: 2 statistics × pages, twice with a comparison', async () => {
    const cases: [string, number][] = [
      ['period: LAST_30_DAYS', 2 * 1],
      ['period: LAST_30_DAYS, compare: PREVIOUS_PERIOD', 2 * 2 * 1],
      ['period: LAST_365_DAYS, compare: PREVIOUS_YEAR', 2 * 2 * 4],
    ];
    for (const [args, cost] of cases) {
      expect(
        await requested(
          `{ website(id: "${sites.oldest}") { summary(${args}) { current { visitors } previous { visitors } visitorsChange } } }`,
        ),
        args,
      ).toBe(WEBSITE + cost);
    }
  });

  it('PREVIOUS_YEAR whose year-earlier range holds 29 February: the pages of the longer range count', async () => {
    // 2025-01-01..2025-10-27 is 300 days (3 pages); a year earlier, 2024-01-01..2024-10-27, 301 (4 pages).
    const response = await stack.gql<WebsiteResult<{ summary: { previous: { range: RangeData } | null } }>>(
      `{ website(id: "${sites.oldest}") { summary(from: "2025-01-01", to: "2025-10-27", compare: PREVIOUS_YEAR) { previous { range { from to } } } } }`,
    );
    const previous = present(websiteOf(response).summary.previous, 'previous');
    expect(previous.range).toEqual({ from: '2024-01-01', to: '2024-10-27' });
    expect(daysOf('2025-01-01', '2025-10-27')).toHaveLength(300);
    expect(daysOf(previous.range.from, previous.range.to)).toHaveLength(301);
    expect(extensionsOf(response).cost?.requested).toBe(WEBSITE + 2 * 3 + 2 * 4);
  });

  it("100 websites with a year's series each: refused by the cost limit, with no upstream call", async () => {
    const response = await stack.gql<unknown>(
      '{ websites(perPage: 100) { nodes { id series(metric: VISITORS, period: LAST_365_DAYS) { total } } } }',
    );
    expect(response.data ?? null).toBeNull();
    const error = firstError(response);
    expect(error.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', cost: 1 + 100 * 4, costLimit: 100 });
    expect(extensionsOf(response)).toMatchObject({ cost: { requested: 1 + 100 * 4, limit: 100 }, upstreamCalls: 0 });
    expect(stack.sandbox.log.count).toBe(0);
  });
});

// ---- Through the cache ------------------------------------------------------------------------------

describe('through the cache (CACHE on, clock pinned)', () => {
  const stack = useStack({ env: { CACHE: 'on' }, gateway: PINNED });
  let sites: DemoSites;
  beforeAll(async () => {
    sites = await demoSites(stack);
  });

  it('a second identical request over settled ranges makes no upstream call', async () => {
    const query = `{ website(id: "${sites.oldest}") {
      summary(period: LAST_MONTH, compare: PREVIOUS_YEAR) { current { visitors pageviews } previous { visitors pageviews } visitorsChange }
      series(metric: PAGEVIEWS, from: "${LONG.from}", to: "2026-03-14", interval: MONTH) { total points { date count } }
      stats(name: COUNTRY, period: LAST_MONTH) { sum nodes { label share } } } }`;
    const first = await stack.gql<WebsiteResult<unknown>>(query);
    const data = websiteOf(first);
    expect(stack.sandbox.log.count).toBeGreaterThan(1);
    expect(extensionsOf(first).cache?.misses).toBeGreaterThan(1);

    stack.sandbox.log.reset();
    const second = await stack.gql<WebsiteResult<unknown>>(query);
    expect(websiteOf(second)).toEqual(data);
    expect(stack.sandbox.log.count).toBe(0);
    expect(extensionsOf(second)).toMatchObject({ upstreamCalls: 0, cache: { misses: 0, stale: 0 } });
    expect(extensionsOf(second).cache?.hits).toBeGreaterThan(1);
  });
});
