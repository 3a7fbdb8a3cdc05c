// Today's figures as they stand at a minute of the day: a seeded website's day of traffic happens
// along its hours, so that a live view of today moves by itself. The day's own hourly statistics
// (visitors_hours, pageviews_hours: a per-site curve with a daytime peak, an evening shoulder and a
// quiet night, plus each day's noise) say how much of it has happened by then: the hours before the
// current one in full, the current one pro rata to its minutes. Everything else follows from those
// two figures, rounded down or to the nearest, so that every figure only grows from minute to
// minute and the last minute of the day gives back the whole day's.
import { CONTINENT_OF } from './demo-traffic.js';
import type { SeriesName } from './dialect.js';

export const MINUTES_PER_DAY = 1440;
const MINUTES_PER_HOUR = 60;
const HOURS_PER_DAY = 24;

/** One day of a website's statistics: name -> value -> count (positive counts only). */
export type DayCounts = ReadonlyMap<SeriesName, ReadonlyMap<string, number>>;

/** A share as a ratio of whole numbers, so that scaling a count is exact. */
interface Share {
  num: number;
  den: number;
}

/** The statistics that count pageviews; the entry pages take the smaller share of the two. */
const OF_PAGEVIEWS: ReadonlySet<SeriesName> = new Set(['page']);

/**
 * A day's full figures, and what of them has happened by a given minute (UTC, 0 to 1440):
 *
 * - pageviews: the day's pageviews times the share of its `pageviews_hours` that has happened;
 * - visitors: the same by `visitors_hours`, but never more than the pageviews so far (each visitor
 *   viewed a page; the two curves peak at different hours);
 * - the hourly statistics: that many visitors (pageviews) filled into the day's hours in order, each
 *   up to its full count, so no hour after the current one has any, and they add up exactly;
 * - pages: by the pageviews' share; entry pages by the smaller of the two shares (so never more
 *   entries than pageviews for a page); continents: their countries added up; every other
 *   statistic by the visitors' share, each count rounded to the nearest.
 *
 * Scaling one share by whole-number rounding keeps the order between any two counts of the day
 * (cities never above their country, and so on), and each figure is a non-decreasing function of
 * the minute, equal to the day's at 1440.
 */
export class GrowingDay {
  private readonly visitors: number;
  private readonly pageviews: number;
  private readonly visitorHours: readonly number[];
  private readonly pageviewHours: readonly number[];

  constructor(
    private readonly full: DayCounts,
    private readonly continentOf: ReadonlyMap<string, string> = CONTINENT_OF,
  ) {
    this.visitors = sum(full.get('visitor'));
    this.pageviews = sum(full.get('pageview'));
    this.visitorHours = byHour(full.get('visitors_hours'));
    this.pageviewHours = byHour(full.get('pageviews_hours'));
  }

  /** The day's figures at `minute` minutes after midnight; the whole day's from 1440 on. */
  at(minute: number): DayCounts {
    const m = Math.min(Math.max(Math.floor(minute), 0), MINUTES_PER_DAY);
    if (m >= MINUTES_PER_DAY) return this.full;
    const pageviews = happened(this.pageviews, this.pageviewHours, m);
    const visitors = Math.min(happened(this.visitors, this.visitorHours, m), pageviews);
    const ofVisitors: Share = { num: visitors, den: this.visitors };
    const ofPageviews: Share = { num: pageviews, den: this.pageviews };
    const smaller = ofVisitors.num * ofPageviews.den <= ofPageviews.num * ofVisitors.den ? ofVisitors : ofPageviews;
    const fallback: Share = { num: m, den: MINUTES_PER_DAY };

    const counts = new Map<SeriesName, Map<string, number>>();
    for (const [name, values] of this.full) {
      if (name === 'continent') continue;
      if (name === 'visitor' || name === 'pageview') {
        const total = name === 'visitor' ? visitors : pageviews;
        counts.set(name, new Map(total > 0 ? [...values.keys()].map((day) => [day, total] as const) : []));
      } else if (name === 'visitors_hours') {
        counts.set(name, fillHours(this.visitorHours, scale(sumOf(this.visitorHours), ofVisitors, fallback, Math.floor)));
      } else if (name === 'pageviews_hours') {
        counts.set(name, fillHours(this.pageviewHours, scale(sumOf(this.pageviewHours), ofPageviews, fallback, Math.floor)));
      } else {
        const share = name === 'landing_page' ? smaller : OF_PAGEVIEWS.has(name) ? ofPageviews : ofVisitors;
        const scaled = new Map<string, number>();
        for (const [value, count] of values) {
          const now = scale(count, share, fallback, Math.round);
          if (now > 0) scaled.set(value, now);
        }
        counts.set(name, scaled);
      }
    }
    const continents = this.full.get('continent');
    if (continents !== undefined) counts.set('continent', this.continentsOf(continents, counts.get('country')));
    return counts;
  }

  /** Each continent: its countries so far added up (never above the day's own count). */
  private continentsOf(full: ReadonlyMap<string, number>, countries: ReadonlyMap<string, number> | undefined): Map<string, number> {
    const continents = new Map<string, number>();
    for (const [country, count] of countries ?? []) {
      const continent = this.continentOf.get(country);
      if (continent !== undefined && full.has(continent)) continents.set(continent, (continents.get(continent) ?? 0) + count);
    }
    for (const [continent, count] of continents) continents.set(continent, Math.min(count, full.get(continent) ?? 0));
    return continents;
  }
}

function sum(values: ReadonlyMap<string, number> | undefined): number {
  let total = 0;
  for (const count of values?.values() ?? []) total += count;
  return total;
}

function sumOf(counts: readonly number[]): number {
  return counts.reduce((acc, count) => acc + count, 0);
}

/** The 24 hourly counts of an hourly statistic (values `00` to `23`). */
function byHour(values: ReadonlyMap<string, number> | undefined): number[] {
  const hours = new Array<number>(HOURS_PER_DAY).fill(0);
  for (const [hour, count] of values ?? []) {
    const h = Number(hour);
    if (Number.isInteger(h) && h >= 0 && h < HOURS_PER_DAY) hours[h] = count;
  }
  return hours;
}

/**
 * How much of a day's `total` has happened by minute `m`: the hours before the current one in full
 * and the current one pro rata, as a share of the hours' sum (which is the total itself for the
 * generated days); evenly over the day when there are no hours.
 */
function happened(total: number, hours: readonly number[], m: number): number {
  const all = sumOf(hours);
  if (all <= 0) return Math.floor((total * m) / MINUTES_PER_DAY);
  const hour = Math.floor(m / MINUTES_PER_HOUR);
  let byClock = 0;
  for (let h = 0; h < hour; h++) byClock += hours[h] as number;
  byClock += Math.floor(((hours[hour] ?? 0) * (m % MINUTES_PER_HOUR)) / MINUTES_PER_HOUR);
  return Math.floor((total * byClock) / all);
}

/** `count` times the share (or the fallback, for a day with nothing in the share's total), rounded as `round` does. */
function scale(count: number, share: Share, fallback: Share, round: (x: number) => number): number {
  const { num, den } = share.den > 0 ? share : fallback;
  return Math.min(count, round((count * num) / den));
}

/** `total` poured into the hours in order, each up to its own count: the earliest hours fill first. */
function fillHours(hours: readonly number[], total: number): Map<string, number> {
  const filled = new Map<string, number>();
  let left = total;
  for (let h = 0; h < HOURS_PER_DAY && left > 0; h++) {
    const count = Math.min(hours[h] as number, left);
    if (count > 0) filled.set(String(h).padStart(2, '0'), count);
    left -= count;
  }
  return filled;
}
