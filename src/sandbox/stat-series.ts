// One statistic of one website over the seeded window, built once and read-only afterwards.
// Label statistics keep prefix sums over the days, so the total of any date range is two array
// reads per value whatever the range's length; the two daily series (visitor, pageview, whose
// values are the days themselves) keep one count per day, and their days in count order both ways,
// so a request walks the days of its range instead of sorting them.

export interface StatRow {
  value: string;
  count: number;
}

export interface StatRange {
  fromDay: number;
  toDay: number;
  /** Case-insensitive substring of the value; undefined for all rows. */
  search?: string;
  sortBy: 'count' | 'value';
  sort: 'asc' | 'desc';
}

export interface StatSeries {
  /** Rows with a positive count in the range (grouped by value, counts summed), filtered and sorted. */
  rows(range: StatRange): StatRow[];
}

/** A generated statistic: one of its days can be read, or stood in for by other counts. */
export interface DaySeries extends StatSeries {
  /** The day's counts by value (positive ones only); empty outside the window. */
  countsOn(day: number): Map<string, number>;
  /**
   * A view of the statistic with the day's counts replaced by `counts` (a value left out counts 0
   * that day; values the statistic never had are ignored). It shares the tables, so it costs a
   * pass over the values, and a request on it costs what one on the statistic does.
   */
  withDay(day: number, counts: ReadonlyMap<string, number>): StatSeries;
}

/** Day indexes [lo, hi] of the window inside the range; lo > hi when they do not meet. */
function clamp(range: StatRange, firstDay: number, dayCount: number): [number, number] {
  return [Math.max(range.fromDay - firstDay, 0), Math.min(range.toDay - firstDay, dayCount - 1)];
}

/** One day of a label statistic counted otherwise: `delta[v]` is added to value v's count on day index `index`. */
interface DayDelta {
  index: number;
  delta: Float64Array;
}

class LabelSeries implements DaySeries {
  constructor(
    private readonly firstDay: number,
    private readonly dayCount: number,
    private readonly values: readonly string[],
    private readonly lowered: readonly string[],
    /** prefix[v * (dayCount + 1) + d] = value v's counts summed over days [0, d). */
    private readonly prefix: Float64Array,
    private readonly replaced: DayDelta | null = null,
  ) {}

  rows(range: StatRange): StatRow[] {
    const [lo, hi] = clamp(range, this.firstDay, this.dayCount);
    if (lo > hi) return [];
    const needle = range.search?.toLowerCase();
    const stride = this.dayCount + 1;
    const delta = this.replaced !== null && this.replaced.index >= lo && this.replaced.index <= hi ? this.replaced.delta : null;
    const rows: StatRow[] = [];
    for (let v = 0; v < this.values.length; v++) {
      if (needle !== undefined && !(this.lowered[v] as string).includes(needle)) continue;
      let count = (this.prefix[v * stride + hi + 1] as number) - (this.prefix[v * stride + lo] as number);
      if (delta !== null) count += delta[v] as number;
      if (count > 0) rows.push({ value: this.values[v] as string, count });
    }
    return sortRows(rows, range);
  }

  countsOn(day: number): Map<string, number> {
    const counts = new Map<string, number>();
    const d = day - this.firstDay;
    if (d < 0 || d >= this.dayCount) return counts;
    for (let v = 0; v < this.values.length; v++) {
      const count = this.countAt(v, d);
      if (count > 0) counts.set(this.values[v] as string, count);
    }
    return counts;
  }

  withDay(day: number, counts: ReadonlyMap<string, number>): StatSeries {
    const d = day - this.firstDay;
    if (d < 0 || d >= this.dayCount) return this;
    const delta = new Float64Array(this.values.length);
    for (let v = 0; v < this.values.length; v++) delta[v] = Math.max(0, counts.get(this.values[v] as string) ?? 0) - this.countAt(v, d);
    return new LabelSeries(this.firstDay, this.dayCount, this.values, this.lowered, this.prefix, { index: d, delta });
  }

  /** Value v's own count on day index d (without any replaced day). */
  private countAt(v: number, d: number): number {
    const at = v * (this.dayCount + 1) + d;
    return (this.prefix[at + 1] as number) - (this.prefix[at] as number);
  }
}

class DailySeries implements DaySeries {
  constructor(
    private readonly firstDay: number,
    /** `YYYY-MM-DD` of each day of the window. */
    private readonly dates: readonly string[],
    private readonly counts: readonly number[],
    /** Indexes of the days with a count, by count ascending, ties by day (= value) ascending. */
    private readonly byCountAsc: Uint32Array,
    /** The same days by count descending, ties by day ascending. */
    private readonly byCountDesc: Uint32Array,
    /** One day counted otherwise: its index, and its count there. */
    private readonly replaced: { index: number; count: number } | null = null,
  ) {}

  /** Sorted once here, so a request over many days only walks them in order. */
  static of(firstDay: number, dates: readonly string[], counts: readonly number[]): DailySeries {
    const days = [...counts.keys()].filter((d) => (counts[d] as number) > 0);
    const count = (d: number): number => counts[d] as number;
    const byCountAsc = Uint32Array.from(days.sort((a, b) => count(a) - count(b) || a - b));
    const byCountDesc = Uint32Array.from(days.sort((a, b) => count(b) - count(a) || a - b));
    return new DailySeries(firstDay, dates, counts, byCountAsc, byCountDesc);
  }

  /** Rows in the order sortRows() would give them: dates are unique and sort as the days do. */
  rows(range: StatRange): StatRow[] {
    const [lo, hi] = clamp(range, this.firstDay, this.dates.length);
    const needle = range.search?.toLowerCase();
    const replaced = this.replaced;
    const countOf = (d: number): number => (replaced !== null && d === replaced.index ? replaced.count : (this.counts[d] as number));
    const rows: StatRow[] = [];
    const take = (d: number): void => {
      const count = countOf(d);
      const value = this.dates[d] as string;
      if (count > 0 && (needle === undefined || value.includes(needle))) rows.push({ value, count });
    };
    if (range.sortBy === 'value') {
      if (range.sort === 'asc') for (let d = lo; d <= hi; d++) take(d);
      else for (let d = hi; d >= lo; d--) take(d);
      return rows;
    }
    const asc = range.sort === 'asc';
    // The replaced day is left where its own count sorted it and taken where its new count goes:
    // before the first day that sorts after it.
    let pending = replaced !== null && replaced.index >= lo && replaced.index <= hi ? replaced : null;
    for (const d of asc ? this.byCountAsc : this.byCountDesc) {
      if (replaced !== null && d === replaced.index) continue;
      if (d < lo || d > hi) continue;
      if (pending !== null) {
        const count = this.counts[d] as number;
        const after = asc ? count > pending.count : count < pending.count;
        if (after || (count === pending.count && d > pending.index)) {
          take(pending.index);
          pending = null;
        }
      }
      take(d);
    }
    if (pending !== null) take(pending.index);
    return rows;
  }

  countsOn(day: number): Map<string, number> {
    const d = day - this.firstDay;
    const count = d >= 0 && d < this.dates.length ? (this.counts[d] as number) : 0;
    return count > 0 ? new Map([[this.dates[d] as string, count]]) : new Map();
  }

  withDay(day: number, counts: ReadonlyMap<string, number>): StatSeries {
    const index = day - this.firstDay;
    if (index < 0 || index >= this.dates.length) return this;
    const count = Math.max(0, counts.get(this.dates[index] as string) ?? 0);
    return new DailySeries(this.firstDay, this.dates, this.counts, this.byCountAsc, this.byCountDesc, { index, count });
  }
}

const byValue = (a: StatRow, b: StatRow): number => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);

/** Ties on count are broken by value ascending in both directions, so pages are deterministic. */
function sortRows(rows: StatRow[], { sortBy, sort }: StatRange): StatRow[] {
  const sign = sort === 'asc' ? 1 : -1;
  if (sortBy === 'value') return rows.sort((a, b) => sign * byValue(a, b));
  return rows.sort((a, b) => sign * (a.count - b.count) || byValue(a, b));
}

/**
 * A statistic with counts added to one day on top of the generated ones (POST /__sandbox/traffic: a
 * live view's today moving on demand). `added` is read at each request, so later additions show.
 */
export function withAddedOnDay(series: StatSeries, day: number, added: ReadonlyMap<string, number>): StatSeries {
  return {
    rows(range) {
      const rows = series.rows(range).map((row) => ({ ...row }));
      if (day < range.fromDay || day > range.toDay || added.size === 0) return rows;
      const needle = range.search?.toLowerCase();
      for (const [value, count] of added) {
        if (needle !== undefined && !value.toLowerCase().includes(needle)) continue;
        const row = rows.find((each) => each.value === value);
        if (row) row.count += count;
        else rows.push({ value, count });
      }
      return sortRows(rows, range);
    },
  };
}

/** Collects the daily counts of a label statistic while the demo traffic is generated. */
export class LabelSeriesBuilder {
  private readonly daily = new Map<string, number[]>();

  constructor(
    private readonly firstDay: number,
    private readonly dayCount: number,
  ) {}

  /** The daily counts of one value, created on first use; write `column[dayIndex]`. */
  column(value: string): number[] {
    let counts = this.daily.get(value);
    if (!counts) {
      counts = new Array<number>(this.dayCount).fill(0);
      this.daily.set(value, counts);
    }
    return counts;
  }

  /** Zeroes every value's days before index `day`. */
  clearBefore(day: number): void {
    for (const counts of this.daily.values()) counts.fill(0, 0, day);
  }

  build(): DaySeries {
    const values = [...this.daily.keys()].sort();
    const stride = this.dayCount + 1;
    const prefix = new Float64Array(values.length * stride);
    values.forEach((value, v) => {
      const counts = this.daily.get(value) as number[];
      let running = 0;
      for (let d = 0; d < this.dayCount; d++) {
        running += Math.max(0, counts[d] ?? 0);
        prefix[v * stride + d + 1] = running;
      }
    });
    return new LabelSeries(
      this.firstDay,
      this.dayCount,
      values,
      values.map((value) => value.toLowerCase()),
      prefix,
    );
  }
}

/** A statistic whose values are the days themselves (visitor, pageview). */
export function dailySeries(firstDay: number, dates: readonly string[], counts: readonly number[]): DaySeries {
  return DailySeries.of(firstDay, dates, counts);
}
