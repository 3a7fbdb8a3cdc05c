// The reads of a website's daily rows, as a series or a summary makes them (series.ts) and as the
// look-ahead starts them before (prefetch.ts): one place, so that both ask the loaders the same keys.
// Apart from series.ts, which hangs its fields on Website: the look-ahead is imported by website.ts.
import { daysBetween } from '../analytics/calendar.js';
import type { DateRange } from '../analytics/periods.js';
import type { StatName, StatsQuery } from '../domain.js';
import { pagesOf, type PageBound } from '../upstream/source.js';

export type Metric = 'VISITORS' | 'PAGEVIEWS';
const DAILY_STAT: Record<Metric, StatName> = { VISITORS: 'visitor', PAGEVIEWS: 'pageview' };

/**
 * A row a day at most, so the pages those days fill: the most a read of a range's daily rows makes,
 * and what a series or a summary declares as its cost.
 */
export function dailyBound(range: DateRange): PageBound {
  const days = daysBetween(range.from, range.to);
  return { rows: days, pages: pagesOf(days) };
}

/** The read of every day of `range` for a metric: the upstream's daily rows, oldest first, and how far it may go. */
export function dailyRead(
  websiteId: string,
  metric: Metric,
  range: DateRange,
): { query: Omit<StatsQuery, 'page' | 'perPage'>; bound: PageBound } {
  return { query: { websiteId, name: DAILY_STAT[metric], ...range, sortBy: 'value', sort: 'asc' }, bound: dailyBound(range) };
}
