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

/** Day indexes [lo, hi] of the window inside the range; lo > hi when they do not meet. */
function clamp(range: StatRange, firstDay: number, dayCount: number): [number, number] {
  return [Math.max(range.fromDay - firstDay, 0), Math.min(range.toDay - firstDay, dayCount - 1)];
}

class LabelSeries implements StatSeries {
  private readonly lowered: string[];

  constructor(
    private readonly firstDay: number,
    private readonly dayCount: number,
    private readonly values: readonly string[],
    /** prefix[v * (dayCount + 1) + d] = value v's counts summed over days [0, d). */
    private readonly prefix: Float64Array,
  ) {
    this.lowered = values.map((value) => value.toLowerCase());
  }

  rows(range: StatRange): StatRow[] {
    const [lo, hi] = clamp(range, this.firstDay, this.dayCount);
    if (lo > hi) return [];
    const needle = range.search?.toLowerCase();
    const stride = this.dayCount + 1;
    const rows: StatRow[] = [];
    for (let v = 0; v < this.values.length; v++) {
      if (needle !== undefined && !(this.lowered[v] as string).includes(needle)) continue;
      const count = (this.prefix[v * stride + hi + 1] as number) - (this.prefix[v * stride + lo] as number);
      if (count > 0) rows.push({ value: this.values[v] as string, count });
    }
    return sortRows(rows, range);
  }
}

class DailySeries implements StatSeries {
  /** Indexes of the days with a count, by count ascending, ties by day (= value) ascending. */
  private readonly byCountAsc: Uint32Array;
  /** The same days by count descending, ties by day ascending. */
  private readonly byCountDesc: Uint32Array;

  constructor(
    private readonly firstDay: number,
    /** `YYYY-MM-DD` of each day of the window. */
    private readonly dates: readonly string[],
    private readonly counts: readonly number[],
  ) {
    // Sorted once here, so a request over many days only walks them in order.
    const days = [...counts.keys()].filter((d) => (counts[d] as number) > 0);
    const count = (d: number): number => counts[d] as number;
    this.byCountAsc = Uint32Array.from(days.sort((a, b) => count(a) - count(b) || a - b));
    this.byCountDesc = Uint32Array.from(days.sort((a, b) => count(b) - count(a) || a - b));
  }

  /** Rows in the order sortRows() would give them: dates are unique and sort as the days do. */
  rows(range: StatRange): StatRow[] {
    const [lo, hi] = clamp(range, this.firstDay, this.dates.length);
    const needle = range.search?.toLowerCase();
    const rows: StatRow[] = [];
    const take = (d: number): void => {
      const count = this.counts[d] as number;
      const value = this.dates[d] as string;
      if (count > 0 && (needle === undefined || value.includes(needle))) rows.push({ value, count });
    };
    if (range.sortBy === 'value') {
      if (range.sort === 'asc') for (let d = lo; d <= hi; d++) take(d);
      else for (let d = hi; d >= lo; d--) take(d);
    } else {
      for (const d of range.sort === 'asc' ? this.byCountAsc : this.byCountDesc) if (d >= lo && d <= hi) take(d);
    }
    return rows;
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

  build(): StatSeries {
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
    return new LabelSeries(this.firstDay, this.dayCount, values, prefix);
  }
}

/** A statistic whose values are the days themselves (visitor, pageview). */
export function dailySeries(firstDay: number, dates: readonly string[], counts: readonly number[]): StatSeries {
  return new DailySeries(firstDay, dates, counts);
}
