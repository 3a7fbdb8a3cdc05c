// Daily rows as a time series: every day of the range (zero without a row), summed into ISO weeks or
// calendar months; totals and the comparison with another period.
import { addDays, daysBetween, eachDay, isoWeekStart, monthStart, yearEarlier } from './calendar.js';
import type { DateRange } from './periods.js';

export type Interval = 'DAY' | 'WEEK' | 'MONTH';
export type Comparison = 'PREVIOUS_PERIOD' | 'PREVIOUS_YEAR';

export interface SeriesPoint {
  /** The bucket's first day inside the range. */
  date: string;
  count: number;
}

/** Rows outside the range are ignored. */
export function zeroFill(rows: readonly { value: string; count: number }[], range: DateRange): SeriesPoint[] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.value, (counts.get(row.value) ?? 0) + row.count);
  return eachDay(range.from, range.to).map((date) => ({ date, count: counts.get(date) ?? 0 }));
}

const bucketStart: Record<Interval, (day: string) => string> = {
  DAY: (day) => day,
  WEEK: isoWeekStart,
  MONTH: monthStart,
};

/** Oldest first; a bucket that starts before the range is dated by its first day inside it. */
export function bucket(daily: readonly SeriesPoint[], interval: Interval, range: DateRange): SeriesPoint[] {
  const buckets = new Map<string, number>();
  for (const { date, count } of daily) {
    const start = bucketStart[interval](date);
    const key = start < range.from ? range.from : start;
    buckets.set(key, (buckets.get(key) ?? 0) + count);
  }
  return [...buckets].map(([date, count]) => ({ date, count })).sort((a, b) => (a.date < b.date ? -1 : 1));
}

export const total = (points: readonly SeriesPoint[]): number => points.reduce((sum, point) => sum + point.count, 0);

export function comparedRange(range: DateRange, comparison: Comparison): DateRange {
  if (comparison === 'PREVIOUS_YEAR') return { from: yearEarlier(range.from), to: yearEarlier(range.to) };
  const length = daysBetween(range.from, range.to);
  return { from: addDays(range.from, -length), to: addDays(range.from, -1) };
}

/** null when previous is 0. */
export function relativeChange(current: number, previous: number): number | null {
  return previous === 0 ? null : (current - previous) / previous;
}

/** The days a summary's changes compare, as many on each side. */
export interface ChangeBasis {
  current: DateRange;
  previous: DateRange;
}

/** A range that reaches `today` compares only its days that are over, with as many of the other; null: none is. */
export function changeBasis(current: DateRange, previous: DateRange, today: string): ChangeBasis | null {
  if (current.to < today) return { current, previous };
  const lastOver = addDays(today, -1);
  if (lastOver < current.from) return null;
  const days = daysBetween(current.from, lastOver);
  const previousEnd = addDays(previous.from, days - 1);
  return {
    current: { from: current.from, to: lastOver },
    previous: { from: previous.from, to: previousEnd < previous.to ? previousEnd : previous.to },
  };
}

export const totalWithin = (points: readonly SeriesPoint[], range: DateRange): number =>
  total(points.filter((point) => point.date >= range.from && point.date <= range.to));
