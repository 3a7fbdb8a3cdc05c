// The install's state: users, websites (one global id sequence) and each website's statistics.
// Seeded websites generate their statistics on first read, so starting a sandbox costs almost
// nothing; the generated tables depend only on the seed, the website and "today". With a clock,
// today's figures are the part of the day's generated traffic that has happened by its time of day
// (growing-day.ts), worked out once a minute per website on top of the same tables.
import { dayStartMs, formatYmd, laravelTimestamp } from './calendar.js';
import { DEMO_USERS, DEMO_WEBSITES, tenantKey } from './demo-data.js';
import type { TrafficProfile } from './demo-traffic.js';
import { WINDOW_DAYS, generateTraffic } from './demo-traffic.js';
import type { Dialect, SeriesName } from './dialect.js';
import { GrowingDay, MINUTES_PER_DAY } from './growing-day.js';
import { mixSeed, seededRandom } from './random.js';
import { withAddedOnDay, type DaySeries, type StatSeries } from './stat-series.js';
import type { EchoedField, Flag, ListQuery, NewWebsite, WebsiteChanges } from './validation.js';

/** A stored website: what a store request validates to, plus what the service itself keeps. */
export interface WebsiteRecord extends NewWebsite {
  id: number;
  userId: number;
  favorite: Flag;
  createdAt: number;
  updatedAt: number;
  /** Seeded websites only: how their demo traffic is generated. */
  traffic: { profile: TrafficProfile; seed: number } | null;
}

/** A website as the upstream serialises it: `password` says whether one is set, never what it is. */
export interface WireWebsite {
  id: number;
  domain: string;
  privacy: number;
  email: number;
  password: boolean;
  exclude_bots: number;
  exclude_params: string | null;
  exclude_ips: string | null;
  favorite: number;
  created_at: string;
  updated_at: string;
}

/** A value echoed as sent: a string from a form; from a JSON body, whatever scalar it held. */
export type EchoedValue = string | number | boolean;

/**
 * A website as the older install serialises it: no exclude_params, no favorite; privacy and email
 * NULL when never set; and right after a write, the numeric fields sent come back as sent.
 */
export interface LegacyWireWebsite {
  id: number;
  domain: string;
  privacy: number | EchoedValue | null;
  email: number | EchoedValue | null;
  password: boolean;
  exclude_bots: number | EchoedValue;
  exclude_ips: string | null;
  created_at: string;
  updated_at: string;
}

export function toWire(website: WebsiteRecord): WireWebsite {
  return {
    id: website.id,
    domain: website.domain,
    // Only the legacy dialect stores NULL, and that install reads it as 0.
    privacy: website.privacy ?? 0,
    email: website.email ?? 0,
    password: website.password !== null,
    exclude_bots: website.excludeBots,
    exclude_params: website.excludeParams,
    exclude_ips: website.excludeIps,
    favorite: website.favorite,
    created_at: laravelTimestamp(website.createdAt),
    updated_at: laravelTimestamp(website.updatedAt),
  };
}

/** `posted`: what a create or update request sent for the numeric fields, echoed instead of the stored numbers. */
export function toLegacyWire(website: WebsiteRecord, posted: Partial<Record<EchoedField, unknown>> = {}): LegacyWireWebsite {
  const echo = (field: EchoedField): EchoedValue | undefined => {
    const sent = posted[field];
    return typeof sent === 'string' || typeof sent === 'number' || typeof sent === 'boolean' ? sent : undefined;
  };
  return {
    id: website.id,
    domain: website.domain,
    privacy: echo('privacy') ?? website.privacy,
    email: echo('email') ?? website.email,
    password: website.password !== null,
    exclude_bots: echo('exclude_bots') ?? website.excludeBots,
    exclude_ips: website.excludeIps,
    created_at: laravelTimestamp(website.createdAt),
    updated_at: laravelTimestamp(website.updatedAt),
  };
}

/** The website as the dialect serialises it. */
export function wireOf(
  dialect: Dialect,
  website: WebsiteRecord,
  posted?: Partial<Record<EchoedField, unknown>>,
): WireWebsite | LegacyWireWebsite {
  return dialect === 'legacy' ? toLegacyWire(website, posted) : toWire(website);
}

const EMPTY_STATS: ReadonlyMap<SeriesName, DaySeries> = new Map();
const NO_COUNTS: ReadonlyMap<string, number> = new Map();
const MS_PER_MINUTE = 60_000;

/** A seeded website's today: its whole day of traffic, and its figures at the latest minute asked. */
interface Today {
  day: GrowingDay;
  minute: number;
  series: ReadonlyMap<SeriesName, StatSeries>;
}

export class SandboxStore {
  /** First day of the stats window: `today - (WINDOW_DAYS - 1)`, i.e. `today - 1099`. */
  readonly firstDay: number;
  /** `YYYY-MM-DD` of each day of the window, shared by all websites; made on the first stats request. */
  private dates: readonly string[] | undefined;
  private readonly websites = new Map<number, WebsiteRecord>();
  private readonly stats = new Map<number, ReadonlyMap<SeriesName, DaySeries>>();
  /** Today's figures of the seeded websites read so far, by website id (with a clock only). */
  private readonly todays = new Map<number, Today>();
  /** Counts added to today by POST /__sandbox/traffic: website id -> statistic -> value -> count. */
  private readonly addedToday = new Map<number, Map<SeriesName, Map<string, number>>>();
  private readonly userByKey = new Map(DEMO_USERS.map((user) => [user.key, user.id]));
  /** Keys their users deleted: refused as unknown ones are. */
  private readonly revokedKeys = new Set<string>();
  private nextId = 1;

  /**
   * `clock` (ms since the epoch, the sandbox's own): with one, today's figures of the seeded
   * websites are those of its time of day, and grow with it; without, they are the whole day's.
   */
  constructor(
    readonly today: number,
    seed: number,
    private readonly clock: (() => number) | null = null,
    tenantKeys = 0,
  ) {
    for (let n = 1; n <= tenantKeys; n++) this.userByKey.set(tenantKey(n), 1);
    this.firstDay = today - (WINDOW_DAYS - 1);
    DEMO_WEBSITES.forEach((demo, index) => {
      const createdAt = dayStartMs(today - demo.createdDaysAgo) + demo.createdAtSecond * 1000;
      const updatedAt = Math.max(createdAt, dayStartMs(today - demo.updatedDaysAgo) + demo.createdAtSecond * 1000 + 754_000);
      this.insert({
        userId: demo.userId,
        domain: demo.domain,
        privacy: demo.privacy,
        password: demo.password,
        email: demo.email,
        excludeBots: demo.excludeBots,
        excludeParams: demo.excludeParams,
        excludeIps: demo.excludeIps,
        favorite: demo.favorite,
        createdAt,
        updatedAt,
        traffic: { profile: demo.traffic, seed: mixSeed(seed, index + 1) },
      });
    });
  }

  userIdForKey(key: string): number | undefined {
    return this.revokedKeys.has(key) ? undefined : this.userByKey.get(key);
  }

  /** Whether `key` is refused from now on (as after its user deleted it), or accepted again. */
  setKeyRevoked(key: string, revoked: boolean): void {
    if (revoked) this.revokedKeys.add(key);
    else this.revokedKeys.delete(key);
  }

  /** The user's website with that id; undefined for unknown ids and for other users' websites alike. */
  find(userId: number, id: number): WebsiteRecord | undefined {
    const website = this.websites.get(id);
    return website?.userId === userId ? website : undefined;
  }

  /** Any user's website with that id: the older install's stats endpoint does not check the owner. */
  findAny(id: number): WebsiteRecord | undefined {
    return this.websites.get(id);
  }

  list(userId: number, query: ListQuery): WebsiteRecord[] {
    const needle = query.search?.toLowerCase();
    const rows = [...this.websites.values()].filter(
      (website) =>
        website.userId === userId &&
        (needle === undefined || website.domain.includes(needle)) &&
        (query.favorite === undefined || website.favorite === query.favorite),
    );
    const sign = query.sort === 'asc' ? 1 : -1;
    return rows.sort((a, b) =>
      query.sortBy === 'domain' ? sign * (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0) : sign * (a.id - b.id),
    );
  }

  isDomainTaken(domain: string): boolean {
    for (const website of this.websites.values()) if (website.domain === domain) return true;
    return false;
  }

  create(userId: number, fields: NewWebsite, now: number): WebsiteRecord {
    return this.insert({ userId, ...fields, favorite: 0, createdAt: now, updatedAt: now, traffic: null });
  }

  /** Applies validated changes; `updated_at` moves only when something actually changed. */
  update(website: WebsiteRecord, changes: WebsiteChanges, now: number): WebsiteRecord {
    let changed = false;
    const set = <K extends keyof WebsiteRecord>(key: K, value: WebsiteRecord[K] | undefined): void => {
      if (value === undefined || website[key] === value) return;
      website[key] = value;
      changed = true;
    };
    set('privacy', changes.privacy);
    set('password', changes.password);
    set('email', changes.email);
    set('excludeBots', changes.excludeBots);
    set('excludeParams', changes.excludeParams);
    set('excludeIps', changes.excludeIps);
    set('favorite', changes.favorite);
    if (changed) website.updatedAt = now;
    return website;
  }

  delete(website: WebsiteRecord): void {
    this.websites.delete(website.id);
    this.stats.delete(website.id);
    this.todays.delete(website.id);
    this.addedToday.delete(website.id);
  }

  /** Adds visits to today's figures of a website: its visitors and pageviews, and the pages they saw. */
  addTraffic(website: WebsiteRecord, visits: { visitors: number; pageviews: number; page: string }): void {
    const today = formatYmd(this.today);
    let added = this.addedToday.get(website.id);
    if (!added) {
      added = new Map();
      this.addedToday.set(website.id, added);
    }
    const add = (name: SeriesName, value: string, count: number): void => {
      let values = added.get(name);
      if (!values) {
        values = new Map();
        added.set(name, values);
      }
      values.set(value, (values.get(value) ?? 0) + count);
    };
    add('visitor', today, visits.visitors);
    add('pageview', today, visits.pageviews);
    add('page', visits.page, visits.pageviews);
  }

  statsOf(website: WebsiteRecord): ReadonlyMap<SeriesName, StatSeries> {
    let generated = this.stats.get(website.id);
    if (!generated) {
      if (website.traffic) {
        this.dates ??= Array.from({ length: WINDOW_DAYS }, (_, d) => formatYmd(this.firstDay + d));
        generated = generateTraffic(
          website.traffic.profile,
          seededRandom(website.traffic.seed),
          this.firstDay,
          this.dates,
          website.createdAt,
        );
      } else {
        generated = EMPTY_STATS;
      }
      this.stats.set(website.id, generated);
    }
    const minute = this.minuteOfToday();
    const series = minute < MINUTES_PER_DAY && generated.size > 0 ? this.todayAt(website.id, generated, minute) : generated;
    const added = this.addedToday.get(website.id);
    if (!added) return series;
    return new Map(
      [...new Set(series.keys()).union(new Set(added.keys()))].map((name) => {
        const base = series.get(name) ?? { rows: () => [] };
        const values = added.get(name);
        return [name, values ? withAddedOnDay(base, this.today, values) : base];
      }),
    );
  }

  /** Minutes of today gone by the clock, 0 to 1440 (1440 from the end of the day on, and without a clock). */
  minuteOfToday(): number {
    if (this.clock === null) return MINUTES_PER_DAY;
    const minute = Math.floor((this.clock() - dayStartMs(this.today)) / MS_PER_MINUTE);
    return Math.min(Math.max(minute, 0), MINUTES_PER_DAY);
  }

  /** The website's statistics with today as it stands at `minute`: made once a minute, on the generated tables. */
  private todayAt(id: number, generated: ReadonlyMap<SeriesName, DaySeries>, minute: number): ReadonlyMap<SeriesName, StatSeries> {
    const known = this.todays.get(id);
    if (known?.minute === minute) return known.series;
    const day = known?.day ?? new GrowingDay(new Map([...generated].map(([name, stat]) => [name, stat.countsOn(this.today)])));
    const counts = day.at(minute);
    const series = new Map<SeriesName, StatSeries>(
      [...generated].map(([name, stat]) => [name, stat.withDay(this.today, counts.get(name) ?? NO_COUNTS)]),
    );
    this.todays.set(id, { day, minute, series });
    return series;
  }

  private insert(fields: Omit<WebsiteRecord, 'id'>): WebsiteRecord {
    const website: WebsiteRecord = { id: this.nextId++, ...fields };
    this.websites.set(website.id, website);
    return website;
  }
}
