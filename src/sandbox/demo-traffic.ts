// Generates a website's demo statistics: daily counts for the 14 names over the seeded window,
// with a weekly rhythm, a slow trend, noise, a launch spike or two, and label distributions that
// look like a real site's (a long tail of pages and referrers, a dozen browsers and countries);
// plus the older install's three (entry pages, and visitors and pageviews by hour of day).
import { weekday } from './calendar.js';
import type { SeriesName } from './dialect.js';
import { seededRandom } from './random.js';
import type { Random } from './random.js';
import { LabelSeriesBuilder, dailySeries } from './stat-series.js';
import type { DaySeries } from './stat-series.js';

export interface TrafficProfile {
  /** Typical weekday visitors at the middle of the window. */
  visitors: number;
  pagesPerVisit: number;
  /** Weekend traffic relative to weekdays. */
  weekendFactor: number;
  /** Relative growth across the window (0.3 = +30% from the first day to the last). */
  trend: number;
  pages: readonly string[];
  /** `name:value:unit` */
  events: readonly string[];
  campaigns: readonly string[];
}

type Weighted = readonly (readonly [string, number])[];

const BROWSERS: Weighted = [
  ['Chrome', 48],
  ['Safari', 19],
  ['Edge', 9],
  ['Firefox', 7],
  ['Samsung Internet', 4],
  ['Opera', 3],
  ['Brave', 2],
  ['Chrome Mobile iOS', 2],
  ['Yandex Browser', 1.5],
  ['UC Browser', 1.2],
  ['Vivaldi', 0.8],
  ['DuckDuckGo', 0.6],
];
const OPERATING_SYSTEMS: Weighted = [
  ['Windows', 36],
  ['Android', 24],
  ['iOS', 18],
  ['OS X', 14],
  ['Linux', 4],
  ['Chrome OS', 2],
  ['Ubuntu', 1.5],
  ['FreeBSD', 0.2],
];
const DEVICES: Weighted = [
  ['Desktop', 55],
  ['Mobile', 40],
  ['Tablet', 4.5],
  ['Television', 0.4],
];
const SCREEN_RESOLUTIONS: Weighted = [
  ['1920x1080', 22],
  ['390x844', 9],
  ['1366x768', 8],
  ['1536x864', 7],
  ['414x896', 6],
  ['1440x900', 5],
  ['2560x1440', 5],
  ['375x667', 4],
  ['360x800', 4],
  ['412x915', 4],
  ['1280x720', 3],
  ['768x1024', 2.5],
  ['1680x1050', 2],
  ['3840x2160', 1.5],
];
const LANGUAGES: Weighted = [
  ['en', 52],
  ['de', 9],
  ['fr', 7],
  ['es', 7],
  ['pt', 5],
  ['ja', 3],
  ['it', 3],
  ['nl', 3],
  ['pl', 2.5],
  ['ru', 2],
  ['zh', 2],
  ['sv', 1.5],
  ['ko', 1],
  ['tr', 1],
];
/** Country `CC:Name`, its continent `CC:Name`, its weight, and cities with their share of the country. */
const COUNTRIES: readonly (readonly [string, string, number, readonly (readonly [string, number])[]])[] = [
  [
    'US:United States',
    'NA:North America',
    34,
    [
      ['US:New York, NY', 0.18],
      ['US:San Francisco, CA', 0.12],
      ['US:Chicago, IL', 0.08],
      ['US:Austin, TX', 0.06],
    ],
  ],
  [
    'GB:United Kingdom',
    'EU:Europe',
    9,
    [
      ['GB:London', 0.42],
      ['GB:Manchester', 0.1],
    ],
  ],
  [
    'DE:Germany',
    'EU:Europe',
    8,
    [
      ['DE:Berlin', 0.24],
      ['DE:Munich', 0.14],
      ['DE:Hamburg', 0.1],
    ],
  ],
  [
    'IN:India',
    'AS:Asia',
    7,
    [
      ['IN:Bengaluru', 0.26],
      ['IN:Mumbai', 0.18],
    ],
  ],
  [
    'FR:France',
    'EU:Europe',
    6,
    [
      ['FR:Paris', 0.38],
      ['FR:Lyon', 0.08],
    ],
  ],
  [
    'CA:Canada',
    'NA:North America',
    5,
    [
      ['CA:Toronto', 0.3],
      ['CA:Vancouver', 0.16],
    ],
  ],
  ['BR:Brazil', 'SA:South America', 4.5, [['BR:São Paulo', 0.34]]],
  ['NL:Netherlands', 'EU:Europe', 3.5, [['NL:Amsterdam', 0.4]]],
  ['JP:Japan', 'AS:Asia', 3, [['JP:Tokyo', 0.48]]],
  [
    'AU:Australia',
    'OC:Oceania',
    3,
    [
      ['AU:Sydney', 0.36],
      ['AU:Melbourne', 0.3],
    ],
  ],
  [
    'ES:Spain',
    'EU:Europe',
    2.5,
    [
      ['ES:Madrid', 0.3],
      ['ES:Barcelona', 0.25],
    ],
  ],
  ['IT:Italy', 'EU:Europe', 2.2, [['IT:Milan', 0.3]]],
  ['PL:Poland', 'EU:Europe', 2, [['PL:Warsaw', 0.35]]],
  ['SE:Sweden', 'EU:Europe', 1.5, [['SE:Stockholm', 0.45]]],
  ['MX:Mexico', 'NA:North America', 1.5, [['MX:Mexico City', 0.4]]],
  ['NG:Nigeria', 'AF:Africa', 1, [['NG:Lagos', 0.5]]],
];
/** Each country's continent (`CC:Name` both): a continent's count is its countries' counts added up. */
export const CONTINENT_OF: ReadonlyMap<string, string> = new Map(COUNTRIES.map(([country, continent]) => [country, continent]));
const REFERRERS: readonly string[] = [
  'google.com',
  'bing.com',
  'duckduckgo.com',
  't.co',
  'news.ycombinator.com',
  'reddit.com',
  'linkedin.com',
  'facebook.com',
  'github.com',
  'youtube.com',
  'producthunt.com',
  'medium.com',
  'stackoverflow.com',
  'yahoo.com',
  'yandex.ru',
  'baidu.com',
  'instagram.com',
  'dev.to',
  'substack.com',
  'pinterest.com',
  'lobste.rs',
  'mastodon.social',
  'feedly.com',
  'search.brave.com',
  'ecosia.org',
  'wikipedia.org',
];

/**
 * Days of statistics a seeded website has, ending "today": three years and a few days, so that every
 * period of the dashboard's picker and the one it is compared with have data (last year against the
 * calendar year before it reaches back to the first of January two years ago).
 */
export const WINDOW_DAYS = 1100;
/**
 * The most recent days, generated exactly as when they were the whole window (same stream, same
 * draws in the same order), so growing the window left their values as they were. The days before
 * them come from a stream of their own.
 */
export const RECENT_DAYS = 120;
/** A new website's traffic grows from a trickle to its full level over its first weeks. */
const RAMP_DAYS = 28;
const MS_PER_DAY = 86_400_000;
const MS_PER_HOUR = 3_600_000;

/** One label distribution, resolved to its columns once so the daily loop is plain array writes. */
interface Split {
  columns: number[][];
  /** Normalised to sum to 1. */
  shares: number[];
}

type Jitter = (spread: number) => number;
const jitterOf =
  (random: Random): Jitter =>
  (spread) =>
    1 + (random() * 2 - 1) * spread;

/** A campaign's run: day indexes [start, end) of the window. */
interface CampaignRun {
  column: number[];
  start: number;
  end: number;
  share: number;
}

/**
 * `dates` holds the window's days as `YYYY-MM-DD`, first to last (shared by all websites);
 * `createdAt` is when the website was created (ms): it has no statistics before that day, and on
 * that day none in the hours before.
 */
export function generateTraffic(
  profile: TrafficProfile,
  random: Random,
  firstDay: number,
  dates: readonly string[],
  createdAt: number,
): Map<SeriesName, DaySeries> {
  const days = dates.length;
  const recentDays = Math.min(RECENT_DAYS, days);
  /** Index of the recent span's first day. */
  const recent = days - recentDays;
  /** Index of the creation day (negative when the website is older than the window). */
  const created = Math.floor(createdAt / MS_PER_DAY) - firstDay;
  /** Index of the first day with statistics. */
  const start = Math.min(Math.max(created, 0), days);
  const createdHour = Math.floor((createdAt - (firstDay + created) * MS_PER_DAY) / MS_PER_HOUR);
  /** Hours of the day before that have no traffic: those before the creation, on its day. */
  const closedHours = (d: number): number => (d === created ? createdHour : 0);
  /** 0.15 on the creation day, up to 1 after RAMP_DAYS. */
  const ramp = (d: number): number => Math.min(1, 0.15 + (0.85 * (d - created)) / RAMP_DAYS);

  const builders = new Map<SeriesName, LabelSeriesBuilder>();
  const builder = (name: SeriesName): LabelSeriesBuilder => {
    let found = builders.get(name);
    if (!found) {
      found = new LabelSeriesBuilder(firstDay, days);
      builders.set(name, found);
    }
    return found;
  };
  const jitter = jitterOf(random);
  const splitOf = (name: SeriesName, weights: Weighted, lean: number): Split => {
    // Each site leans its own way: the shared distributions are reweighted once per site.
    const leaned = weights.map(([, weight]) => weight * jitter(lean));
    const sum = leaned.reduce((acc, weight) => acc + weight, 0);
    return { columns: weights.map(([value]) => builder(name).column(value)), shares: leaned.map((w) => w / sum) };
  };
  /** Spreads `total` over the split with per-day noise; returns the counts, in the split's order. */
  const spread = (split: Split, d: number, total: number, noise: number, jitterOn: Jitter): number[] => {
    const counts: number[] = [];
    for (let i = 0; i < split.shares.length; i++) {
      const count = Math.round(total * (split.shares[i] as number) * jitterOn(noise));
      (split.columns[i] as number[])[d] = count;
      counts.push(count);
    }
    return counts;
  };

  // The site's own leanings, drawn once from the main stream and shared by every day of the window.
  const browsers = splitOf('browser', BROWSERS, 0.4);
  const systems = splitOf('operating_system', OPERATING_SYSTEMS, 0.4);
  const devices = splitOf('device', DEVICES, 0.2);
  const screens = splitOf('screen_resolution', SCREEN_RESOLUTIONS, 0.4);
  const languages = splitOf('language', LANGUAGES, 0.4);
  const pages = splitOf('page', zipf(profile.pages, 1.1), 0.3);
  const referrers = splitOf('referrer', zipf(REFERRERS, 1.3), 0.3);
  const countries = splitOf(
    'country',
    COUNTRIES.map(([country, , weight]) => [country, weight] as const),
    0.4,
  );
  const continents = COUNTRIES.map(([, continent]) => builder('continent').column(continent));
  const cities = COUNTRIES.map(([, , , list]) => list.map(([city, share]) => ({ column: builder('city').column(city), share })));
  const referredShare = 0.45 + random() * 0.2;
  // Events form a funnel: each one in the list is rarer than the one before.
  const events = profile.events.map((event, rank) => ({
    column: builder('event').column(event),
    rate: (0.03 + random() * 0.03) * 0.55 ** rank,
  }));
  const recentCampaigns: CampaignRun[] = profile.campaigns.map((campaign) => {
    const length = 7 + Math.floor(random() * 28);
    const first = Math.floor(random() * (recentDays - length));
    const column = builder('campaign').column(campaign);
    return { column, start: recent + first, end: recent + first + length, share: 0.02 + random() * 0.08 };
  });
  const recentSpikes = new Map<number, number>();
  for (let i = 0; i < 2; i++) recentSpikes.set(recent + Math.floor(random() * recentDays), 1.8 + random() * 1.4);

  const visitorCounts: number[] = new Array<number>(days).fill(0);
  const pageviewCounts: number[] = new Array<number>(days).fill(0);
  /** Every statistic of day `d` but the hourly ones and the entry pages, from its visitors. */
  const fillDay = (d: number, level: number, campaigns: readonly CampaignRun[], jitterOn: Jitter): void => {
    const visitors = Math.max(1, Math.round(level));
    const pageviews = Math.max(visitors, Math.round(visitors * profile.pagesPerVisit * jitterOn(0.08)));
    visitorCounts[d] = visitors;
    pageviewCounts[d] = pageviews;
    spread(browsers, d, visitors, 0.25, jitterOn);
    spread(systems, d, visitors, 0.25, jitterOn);
    spread(devices, d, visitors, 0.1, jitterOn);
    spread(screens, d, visitors, 0.25, jitterOn);
    spread(languages, d, visitors, 0.25, jitterOn);
    spread(pages, d, pageviews, 0.35, jitterOn);
    spread(referrers, d, visitors * referredShare, 0.4, jitterOn);
    spread(countries, d, visitors, 0.25, jitterOn).forEach((count, i) => {
      const continent = continents[i] as number[];
      continent[d] = (continent[d] ?? 0) + count;
      for (const city of cities[i] ?? []) city.column[d] = Math.round(count * city.share * jitterOn(0.2));
    });
    for (const { column, rate } of events) column[d] = Math.round(visitors * rate * jitterOn(0.5));
    for (const { column, start: from, end, share } of campaigns) {
      if (d >= from && d < end) column[d] = Math.round(visitors * share * jitterOn(0.5));
    }
  };
  const weekdayFactor = (d: number): number => {
    const dow = weekday(firstDay + d);
    return dow === 0 || dow === 6 ? profile.weekendFactor : dow === 5 ? 0.92 : 1;
  };

  // The recent span, from the main stream: `trend` is the growth from its first day to its last.
  for (let r = 0; r < recentDays; r++) {
    const d = recent + r;
    const level =
      profile.visitors *
      (1 + profile.trend * (r / (recentDays - 1) - 0.5)) *
      weekdayFactor(d) *
      (recentSpikes.get(d) ?? 1) *
      jitter(0.12) *
      ramp(d);
    fillDay(d, level, recentCampaigns, jitter);
  }
  // The older install's statistics draw from a stream of their own, seeded by the main stream once
  // it is done, so adding them left every contract statistic exactly as it was.
  const extra = seededRandom(Math.floor(random() * 4_294_967_296));
  const landingPages = entryPages(builder('landing_page'), profile.pages, pages, extra);
  landingPages.fill(visitorCounts, recent, days, extra);
  const visitorHours = hourly(builder('visitors_hours'), extra);
  visitorHours.fill(visitorCounts, recent, days, extra, closedHours);
  const pageviewHours = hourly(builder('pageviews_hours'), extra);
  pageviewHours.fill(pageviewCounts, recent, days, extra, closedHours);

  // The days before the recent span, from the website's creation on, draw from a third stream,
  // seeded by the main stream once everything above has been drawn. Before the recent span the site
  // grew by `trend` a year, so its level meets the recent span's first day; campaigns ran once
  // more each, and spikes came about as often as in the recent span.
  const past = seededRandom(Math.floor(random() * 4_294_967_296));
  if (start < recent) {
    const pastJitter = jitterOf(past);
    const pastDays = recent - start;
    const pastSpikes = new Map<number, number>();
    for (let i = 0; i < Math.round(pastDays / 60); i++) pastSpikes.set(start + Math.floor(past() * pastDays), 1.8 + past() * 1.4);
    const pastCampaigns: CampaignRun[] = [];
    for (const { column } of recentCampaigns) {
      const length = 7 + Math.floor(past() * 28);
      const first = start + Math.floor(past() * (pastDays - length));
      const share = 0.02 + past() * 0.08;
      if (length < pastDays) pastCampaigns.push({ column, start: first, end: first + length, share });
    }
    const atRecentStart = 1 - profile.trend / 2;
    for (let d = start; d < recent; d++) {
      const level =
        profile.visitors *
        atRecentStart *
        (1 + profile.trend) ** (-(recent - d) / 365) *
        weekdayFactor(d) *
        (pastSpikes.get(d) ?? 1) *
        pastJitter(0.12) *
        ramp(d);
      fillDay(d, level, pastCampaigns, pastJitter);
    }
    landingPages.fill(visitorCounts, start, recent, past);
    visitorHours.fill(visitorCounts, start, recent, past, closedHours);
    pageviewHours.fill(pageviewCounts, start, recent, past, closedHours);
  }
  // A website created inside the recent span has nothing before its creation day.
  if (start > recent) {
    visitorCounts.fill(0, 0, start);
    pageviewCounts.fill(0, 0, start);
    for (const built of builders.values()) built.clearBefore(start);
  }

  const series = new Map<SeriesName, DaySeries>([
    ['visitor', dailySeries(firstDay, dates, visitorCounts)],
    ['pageview', dailySeries(firstDay, dates, pageviewCounts)],
  ]);
  for (const [name, built] of builders) series.set(name, built.build());
  return series;
}

function zipf(values: readonly string[], exponent: number): Weighted {
  return values.map((value, rank) => [value, 1 / (rank + 1) ** exponent] as const);
}

/** Fills days [from, to) of a statistic from those days' totals, drawing from `random`. */
interface DayFiller {
  fill(dailyTotals: readonly number[], from: number, to: number, random: Random, closedHours?: (d: number) => number): void;
}

/**
 * Entry pages: each day's visits spread over the site's pages, leaning harder on the top ones than
 * pageviews do (most visits start at `/` or a popular page), and never more entries for a page on
 * a day than it had pageviews that day. The leaning is drawn once, the days as they are filled.
 */
function entryPages(builder: LabelSeriesBuilder, values: readonly string[], pageviews: Split, random: Random): DayFiller {
  const weights = values.map((_, rank) => (1 / (rank + 1) ** 1.6) * (0.7 + random() * 0.6));
  const sum = weights.reduce((acc, weight) => acc + weight, 0);
  const columns = values.map((value) => builder.column(value));
  return {
    fill(visitorCounts, from, to, dayRandom) {
      for (let d = from; d < to; d++) {
        const visitors = visitorCounts[d] as number;
        weights.forEach((weight, i) => {
          const viewed = (pageviews.columns[i] as number[])[d] ?? 0;
          const entries = Math.round((visitors * weight * (0.75 + dayRandom() * 0.5)) / sum);
          (columns[i] as number[])[d] = Math.min(viewed, entries);
        });
      }
    },
  };
}

export const HOURS: readonly string[] = Array.from({ length: 24 }, (_, hour) => String(hour).padStart(2, '0'));

/**
 * Hour of day (UTC): each day's total spread over the 24 hours along a per-site daily curve (a
 * daytime peak whose hour depends on where the audience lives, an evening shoulder, a quiet
 * night) with some noise, apportioned so the hours of a day add up to exactly that day's total.
 * The curve is drawn once, the days as they are filled; a day's closed hours (those before the
 * website was created, on its creation day) get nothing.
 */
function hourly(builder: LabelSeriesBuilder, random: Random): DayFiller {
  const peak = 12 + random() * 8;
  const bump = (hour: number, centre: number, width: number): number => {
    const distance = Math.min(Math.abs(hour - centre), 24 - Math.abs(hour - centre));
    return Math.exp(-(distance * distance) / (2 * width * width));
  };
  const curve = HOURS.map((_, hour) => 0.08 + bump(hour, peak, 3.5) + 0.45 * bump(hour, peak + 5, 2));
  const columns = HOURS.map((hour) => builder.column(hour));
  return {
    fill(dailyTotals, from, to, dayRandom, closedHours = () => 0) {
      for (let d = from; d < to; d++) {
        const closed = closedHours(d);
        const weights = curve.map((weight, hour) => (hour < closed ? 0 : 1) * weight * (0.8 + dayRandom() * 0.4));
        const counts = apportion(dailyTotals[d] as number, weights);
        counts.forEach((count, hour) => ((columns[hour] as number[])[d] = count));
      }
    },
  };
}

/** Whole numbers in proportion to `weights` that add up to exactly `total` (largest remainders first, ties to the first). */
export function apportion(total: number, weights: readonly number[]): number[] {
  const n = weights.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weights[i] as number;
  const counts = new Array<number>(n).fill(0);
  if (sum <= 0 || total <= 0) return counts;
  const remainders = new Float64Array(n);
  let left = total;
  for (let i = 0; i < n; i++) {
    const exact = (total * (weights[i] as number)) / sum;
    const whole = Math.floor(exact);
    counts[i] = whole;
    remainders[i] = exact - whole;
    left -= whole;
  }
  // One more each for the `left` largest remainders, picked in turn (a full sort cost more, for
  // the same picks).
  for (; left > 0; left--) {
    let best = -1;
    for (let i = 0; i < n; i++) {
      const remainder = remainders[i] as number;
      if (remainder >= 0 && (best < 0 || remainder > (remainders[best] as number))) best = i;
    }
    if (best < 0) break;
    counts[best] = (counts[best] as number) + 1;
    remainders[best] = -1;
  }
  return counts;
}
