// Today's figures of the seeded websites grow with the sandbox's clock (growing-day.ts): over real
// HTTP against sandboxes on an injected clock, compared with sandboxes whose today is the whole day;
// then minute by minute through the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYmd } from '../../src/sandbox/calendar.js';
import { CONTRACT_STAT_NAMES, type SeriesName } from '../../src/sandbox/dialect.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { SandboxStore, type WebsiteRecord } from '../../src/sandbox/store.js';
import { KEY_1, KEY_2, TODAY, call, statsPath } from './http.js';
import type { StatRow, WirePage, WirePlainPage } from './http.js';

const WINDOW_START = '2023-03-12'; // TODAY - 1099 days
const YESTERDAY = '2026-03-14';
/** The seeded websites and their owners' keys. */
const SEEDED: readonly (readonly [number, string])[] = [
  [1, KEY_1],
  [2, KEY_1],
  [3, KEY_2],
  [4, KEY_1],
  [5, KEY_1],
  [6, KEY_2],
  [7, KEY_1],
  [8, KEY_1],
  [9, KEY_2],
  [10, KEY_1],
];
/** The statistics only the legacy dialect serves: its entry pages, and visitors and pageviews by hour. */
const LEGACY_ONLY = ['landing_page', 'visitors_hours', 'pageviews_hours'] as const;

const at = (time: string, day = TODAY): number => Date.parse(`${day}T${time}Z`);
let clock = at('08:00:00');
const now = (): number => clock;

/** Sandboxes on the injected clock, and the same data with today's figures the whole day's. */
let live: Sandbox;
let liveLegacy: Sandbox;
let whole: Sandbox;
let wholeLegacy: Sandbox;
beforeAll(async () => {
  [live, liveLegacy, whole, wholeLegacy] = await Promise.all([
    startSandbox({ port: 0, today: TODAY, now }),
    startSandbox({ port: 0, today: TODAY, now, dialect: 'legacy' }),
    startSandbox({ port: 0, today: TODAY }),
    startSandbox({ port: 0, today: TODAY, dialect: 'legacy' }),
  ]);
});
afterAll(async () => {
  await Promise.all([live, liveLegacy, whole, wholeLegacy].map((sandbox) => sandbox.close()));
});

type Figures = Map<string, Map<string, number>>;

/** Every row of a statistic over the range, through the pages, in either dialect's envelope. */
async function allRows(target: Sandbox, id: number, key: string, name: string, from = TODAY, to = TODAY): Promise<StatRow[]> {
  const rows: StatRow[] = [];
  for (let page = 1; ; page++) {
    const query = { per_page: '100', page: String(page), sort_by: 'value', sort: 'asc' };
    const reply = await call<WirePage<StatRow> | WirePlainPage<StatRow>>(target, statsPath(id, name, from, to, query), { key });
    expect(reply.status, `${id} ${name} page ${page}`).toBe(200);
    rows.push(...reply.body.data);
    if (page >= ('meta' in reply.body ? reply.body.meta.last_page : reply.body.last_page)) return rows;
  }
}

/** A website's figures of a range (today by default): every statistic of both dialects, value -> count. */
async function figures(pair: [Sandbox, Sandbox], id: number, key: string, from = TODAY, to = TODAY): Promise<Figures> {
  const [contract, legacy] = pair;
  const names: [Sandbox, string][] = [
    ...CONTRACT_STAT_NAMES.map((name): [Sandbox, string] => [contract, name]),
    ...LEGACY_ONLY.map((name): [Sandbox, string] => [legacy, name]),
  ];
  const read = await Promise.all(names.map(async ([target, name]) => [name, await allRows(target, id, key, name, from, to)] as const));
  return new Map(read.map(([name, rows]) => [name, new Map(rows.map((row) => [row.value, row.count]))]));
}
const liveFigures = (id: number, key: string, from?: string, to?: string) => figures([live, liveLegacy], id, key, from, to);
const wholeFigures = (id: number, key: string, from?: string, to?: string) => figures([whole, wholeLegacy], id, key, from, to);

const sum = (values: ReadonlyMap<string, number> | undefined): number => [...(values ?? [])].reduce((acc, [, count]) => acc + count, 0);
const count = (all: Figures, name: string, value: string): number => all.get(name)?.get(value) ?? 0;
const hoursBefore = (hours: ReadonlyMap<string, number> | undefined, hour: number): number =>
  [...(hours ?? [])].filter(([value]) => Number(value) < hour).reduce((acc, [, n]) => acc + n, 0);

/** Every count of `later` is at least that of `earlier` (a value missing counts 0), and none above the whole day's. */
function expectGrown(earlier: Figures, later: Figures, wholeDay: Figures, label: string): void {
  for (const [name, values] of wholeDay) {
    for (const [value, full] of values) {
      const [before, after] = [count(earlier, name, value), count(later, name, value)];
      expect(after, `${label} ${name} ${value}: ${before} then ${after}`).toBeGreaterThanOrEqual(before);
      expect(after, `${label} ${name} ${value} above the whole day`).toBeLessThanOrEqual(full);
    }
    for (const value of later.get(name)?.keys() ?? []) expect(values.has(value), `${label} ${name} ${value} unknown`).toBe(true);
  }
}

describe("today's figures on the sandbox's clock", () => {
  it('grow between two times of the day, every value of every statistic, and never fall', async () => {
    for (const [id, key] of SEEDED) {
      const wholeDay = await wholeFigures(id, key);
      clock = at('08:00:00');
      const morning = await liveFigures(id, key);
      clock = at('14:00:00');
      const afternoon = await liveFigures(id, key);
      clock = at('21:30:00');
      const evening = await liveFigures(id, key);
      expectGrown(morning, afternoon, wholeDay, `${id} 08:00 -> 14:00`);
      expectGrown(afternoon, evening, wholeDay, `${id} 14:00 -> 21:30`);
      const visitors = sum(wholeDay.get('visitor'));
      if (visitors < 100) continue; // a tiny site can go hours without a visit
      for (const name of ['visitor', 'pageview', 'country', 'page', 'browser', 'visitors_hours']) {
        const [a, b, c, full] = [morning, afternoon, evening, wholeDay].map((all) => sum(all.get(name)));
        expect(a, `${id} ${name} 08:00 < 14:00`).toBeLessThan(b as number);
        expect(b, `${id} ${name} 14:00 < 21:30`).toBeLessThan(c as number);
        expect(c, `${id} ${name} 21:30 < the whole day`).toBeLessThan(full as number);
      }
    }
  });

  it('move minute by minute at a busy hour, and hold still within a minute', async () => {
    const visitors = async (): Promise<number> => sum(new Map((await allRows(live, 7, KEY_1, 'visitor')).map((r) => [r.value, r.count])));
    clock = at('15:00:00');
    const first = await visitors();
    clock = at('15:00:59.999');
    expect(await visitors()).toBe(first);
    clock = at('15:02:00');
    const second = await visitors();
    clock = at('15:05:00');
    const third = await visitors();
    expect(first).toBeLessThan(second);
    expect(second).toBeLessThan(third);
  });

  it("follow the site's hour-of-day curve: at each full hour, its hours before it; no hour after the clock", async () => {
    for (const [id, key] of SEEDED) {
      const wholeDay = await wholeFigures(id, key);
      for (const time of ['03:00:00', '09:00:00', '12:00:00', '17:00:00', '22:00:00', '12:30:00']) {
        clock = at(time);
        const hour = Number(time.slice(0, 2));
        const today = await liveFigures(id, key);
        const [visitors, pageviews] = [sum(today.get('visitor')), sum(today.get('pageview'))];
        if (time.endsWith(':00:00')) {
          // Pageviews are the day's pageviews_hours up to the clock; visitors those of visitors_hours,
          // but never more than the pageviews so far.
          expect(pageviews, `${id} ${time} pageviews`).toBe(hoursBefore(wholeDay.get('pageviews_hours'), hour));
          expect(visitors, `${id} ${time} visitors`).toBe(Math.min(hoursBefore(wholeDay.get('visitors_hours'), hour), pageviews));
        }
        for (const name of ['visitors_hours', 'pageviews_hours']) {
          const hours = [...(today.get(name) ?? new Map())].map(([value]) => Number(value));
          expect(Math.max(-1, ...hours), `${id} ${time} ${name}`).toBeLessThanOrEqual(hour);
        }
        expect(sum(today.get('visitors_hours')), `${id} ${time}`).toBe(visitors);
        expect(sum(today.get('pageviews_hours')), `${id} ${time}`).toBe(pageviews);
        if (visitors > 0) expect([...(today.get('visitor')?.keys() ?? [])]).toEqual([TODAY]);
      }
    }
  });

  it('stay consistent as the generated days are: continents add up to countries, pageviews >= visitors, entries <= pageviews', async () => {
    clock = at('11:37:00');
    for (const [id, key] of SEEDED) {
      const today = await liveFigures(id, key);
      expect(sum(today.get('continent')), `${id}`).toBe(sum(today.get('country')));
      expect(sum(today.get('pageview')), `${id}`).toBeGreaterThanOrEqual(sum(today.get('visitor')));
      for (const [page, entries] of today.get('landing_page') ?? []) {
        expect(entries, `${id} ${page}`).toBeLessThanOrEqual(count(today, 'page', page));
      }
    }
  });

  it("end the day with the whole day's figures, and start it with none", async () => {
    for (const [id, key] of SEEDED) {
      const wholeDay = await wholeFigures(id, key);
      expect(sum(wholeDay.get('visitor')), `${id}`).toBeGreaterThan(0);
      for (const time of [at('00:00:00', '2026-03-16'), at('09:15:00', '2026-03-17')]) {
        clock = time;
        expect(await liveFigures(id, key), `${id} ${new Date(time).toISOString()}`).toEqual(wholeDay);
      }
      clock = at('00:00:30');
      for (const [name, values] of await liveFigures(id, key)) expect(values.size, `${id} ${name} at midnight`).toBe(0);
      clock = at('23:59:59', YESTERDAY);
      expect(sum((await liveFigures(id, key)).get('visitor')), `${id} before today`).toBe(0);
    }
  });

  it('leave the days before today as they were, at any time of day', async () => {
    for (const [id, key] of SEEDED.filter(([id]) => [1, 3, 10].includes(id))) {
      const before = await wholeFigures(id, key, WINDOW_START, YESTERDAY);
      const wholeWindow = await wholeFigures(id, key, WINDOW_START, TODAY);
      for (const time of ['06:00:00', '16:45:00']) {
        clock = at(time);
        expect(await liveFigures(id, key, WINDOW_START, YESTERDAY), `${id} ${time}`).toEqual(before);
        // Over a range ending today, each figure is the days before plus today's so far.
        const [window, today] = [await liveFigures(id, key, WINDOW_START, TODAY), await liveFigures(id, key)];
        for (const [name, values] of wholeWindow) {
          for (const value of values.keys()) {
            expect(count(window, name, value), `${id} ${time} ${name} ${value}`).toBe(
              count(before, name, value) + count(today, name, value),
            );
          }
        }
      }
    }
  });

  it('depend on the clock time alone: another sandbox read in another order answers the same', async () => {
    const twin = await startSandbox({ port: 0, today: TODAY, now });
    try {
      const read = async (target: Sandbox, id: number, key: string) =>
        Promise.all(CONTRACT_STAT_NAMES.map((name) => allRows(target, id, key, name)));
      // The twin reads the evening first, so its cache went through other minutes.
      clock = at('20:10:00');
      await read(twin, 5, KEY_1);
      for (const time of ['07:20:00', '20:10:00']) {
        clock = at(time);
        for (const [id, key] of SEEDED.filter(([id]) => id === 5 || id === 6))
          expect(await read(twin, id, key), `${id} ${time}`).toEqual(await read(live, id, key));
      }
    } finally {
      await twin.close();
    }
  });

  it('keep the traffic added through the control path on top, exactly', async () => {
    const added = await startSandbox({ port: 0, today: TODAY, now });
    try {
      const read = async (target: Sandbox) => ({
        visitors: sum(new Map((await allRows(target, 5, KEY_1, 'visitor')).map((r) => [r.value, r.count]))),
        pageviews: sum(new Map((await allRows(target, 5, KEY_1, 'pageview')).map((r) => [r.value, r.count]))),
        pricing: (await allRows(target, 5, KEY_1, 'page')).find((row) => row.value === '/pricing')?.count ?? 0,
        newPage: (await allRows(target, 5, KEY_1, 'page')).find((row) => row.value === '/brand-new')?.count ?? 0,
      });
      clock = at('10:00:00');
      const base = await read(added);
      const post = (body: unknown) => fetch(`${added.url}/__sandbox/traffic`, { method: 'POST', body: JSON.stringify(body) });
      expect((await post({ websiteId: 5, visitors: 3, pageviews: 5, page: '/pricing' })).status).toBe(204);
      expect((await post({ websiteId: 5, visitors: 2, page: '/brand-new' })).status).toBe(204);
      expect(await read(added)).toEqual({
        visitors: base.visitors + 5,
        pageviews: base.pageviews + 7,
        pricing: base.pricing + 5,
        newPage: 2,
      });
      for (const time of ['13:00:00', '23:59:00', '23:59:59.999']) {
        clock = at(time);
        const grown = await read(live);
        expect(grown.visitors, time).toBeGreaterThan(base.visitors);
        expect(await read(added), time).toEqual({
          visitors: grown.visitors + 5,
          pageviews: grown.pageviews + 7,
          pricing: grown.pricing + 5,
          newPage: 2,
        });
      }
    } finally {
      await added.close();
    }
  });

  it('say when traffic added through the control path counted, on the clock of the log (what the live benchmark times from)', async () => {
    const added = await startSandbox({ port: 0, today: TODAY });
    try {
      const visitors = async (): Promise<number> =>
        sum(new Map((await allRows(added, 5, KEY_1, 'visitor')).map((r) => [r.value, r.count])));
      const before = await visitors();
      const answer = await fetch(`${added.url}/__sandbox/traffic`, { method: 'POST', body: JSON.stringify({ websiteId: 5, visitors: 4 }) });
      expect(answer.status).toBe(204);
      const addedAt = Number(answer.headers.get('x-sandbox-added-at'));
      expect(Number.isFinite(addedAt)).toBe(true);
      expect(await visitors()).toBe(before + 4);
      // The read before the addition was logged before that moment, the one that saw the visits after it.
      const starts = added.log.entries.map((entry) => entry.startedAt);
      expect(starts.length).toBeGreaterThanOrEqual(2);
      expect(starts[0]).toBeLessThan(addedAt);
      expect(starts.at(-1)).toBeGreaterThan(addedAt);
    } finally {
      await added.close();
    }
  });

  it("are the whole day's with a pinned today and no clock, or with liveToday off", async () => {
    clock = at('08:00:00');
    const off = await startSandbox({ port: 0, today: TODAY, now, liveToday: false });
    try {
      const rows = (target: Sandbox) => Promise.all(CONTRACT_STAT_NAMES.map((name) => allRows(target, 1, KEY_1, name)));
      expect(await rows(off)).toEqual(await rows(whole));
      expect(await rows(live)).not.toEqual(await rows(whole));
    } finally {
      await off.close();
    }
  });

  it('start today on the UTC date of the clock when no today is pinned', async () => {
    clock = Date.parse('2025-12-31T18:00:00Z');
    const unpinned = await startSandbox({ port: 0, now });
    try {
      expect((await call(unpinned, '/__sandbox/health')).body).toMatchObject({ today: '2025-12-31' });
      const days = (await allRows(unpinned, 1, KEY_1, 'visitor', '2025-12-30', '2026-01-05')).map((row) => row.value);
      expect(days).toEqual(['2025-12-30', '2025-12-31']);
      const created = (
        await call<{ data: { created_at: string } }>(unpinned, '/api/v1/websites', {
          method: 'POST',
          form: { domain: 'clock.example.com' },
        })
      ).body.data.created_at;
      expect(created).toBe('2025-12-31T18:00:00.000000Z');
    } finally {
      await unpinned.close();
    }
  });
});

describe('the day, minute by minute, through the store', () => {
  it('never lowers a figure, keeps the hours adding up, and ends on the whole day', () => {
    const today = parseYmd(TODAY) as number;
    let minuteClock = at('00:00:00');
    const growing = new SandboxStore(today, 20_240_501, () => minuteClock);
    const fixed = new SandboxStore(today, 20_240_501);
    const day = { fromDay: today, toDay: today, sortBy: 'value', sort: 'asc' } as const;
    const names = [...new Set<SeriesName>([...CONTRACT_STAT_NAMES, ...LEGACY_ONLY])];
    const read = (store: SandboxStore, website: WebsiteRecord): Map<SeriesName, Map<string, number>> =>
      new Map(
        names.map((name) => [name, new Map((store.statsOf(website).get(name)?.rows(day) ?? []).map((row) => [row.value, row.count]))]),
      );
    for (const [id] of SEEDED) {
      const website = growing.findAny(id) as WebsiteRecord;
      const wholeDay = read(fixed, fixed.findAny(id) as WebsiteRecord);
      let previous = new Map<SeriesName, Map<string, number>>();
      let falls = 0;
      let rises = 0;
      for (let minute = 0; minute <= 1440; minute++) {
        minuteClock = at('00:00:00') + minute * 60_000 + 30_000;
        expect(growing.minuteOfToday()).toBe(minute);
        const figures = read(growing, website);
        for (const [name, values] of wholeDay) {
          for (const [value, full] of values) {
            const [before, after] = [previous.get(name)?.get(value) ?? 0, figures.get(name)?.get(value) ?? 0];
            if (after < before || after > full) falls++;
            if (after > before) rises++;
          }
        }
        const [visitors, pageviews] = [sum(figures.get('visitor')), sum(figures.get('pageview'))];
        if (
          sum(figures.get('visitors_hours')) !== visitors ||
          sum(figures.get('pageviews_hours')) !== pageviews ||
          pageviews < visitors ||
          sum(figures.get('continent')) !== sum(figures.get('country'))
        ) {
          throw new Error(`website ${id} at minute ${minute}: the day's figures do not agree`);
        }
        previous = figures;
      }
      expect(falls, `website ${id}`).toBe(0);
      expect(rises, `website ${id}`).toBeGreaterThan(sum(wholeDay.get('visitor')) > 100 ? 200 : 5);
      expect(previous, `website ${id} at the end of the day`).toEqual(wholeDay);
    }
  });
});
