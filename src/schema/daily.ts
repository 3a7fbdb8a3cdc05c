// The reads of a website's daily rows, for series.ts and the look-ahead (prefetch.ts): one place, so that
// both ask the loaders the same keys (not in series.ts, which imports website.ts, which imports prefetch).
import { daysBetween } from '../analytics/calendar.js';
import type { DateRange } from '../analytics/periods.js';
import type { StatName, StatsQuery } from '../domain.js';
import { pagesOf, type PageBound } from '../upstream/source.js';

export type Metric = 'VISITORS' | 'PAGEVIEWS';
const DAILY_STAT: Record<Metric, StatName> = { VISITORS: 'visitor', PAGEVIEWS: 'pageview' };

/** A row a day at most: the pages a read of a range's daily rows makes, and what it declares as cost. */
export function dailyBound(range: DateRange): PageBound {
  const days = daysBetween(range.from, range.to);
  return { rows: days, pages: pagesOf(days) };
}

export function dailyRead(
  websiteId: string,
  metric: Metric,
  range: DateRange,
): { query: Omit<StatsQuery, 'page' | 'perPage'>; bound: PageBound } {
  return { query: { websiteId, name: DAILY_STAT[metric], ...range, sortBy: 'value', sort: 'asc' }, bound: dailyBound(range) };
}
