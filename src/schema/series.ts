// Time series and summaries of a website: the upstream's daily rows, every page read (never more than the
// range's days can fill), zero-filled, bucketed into weeks or months, totalled and compared.
import { dayIn } from '../analytics/calendar.js';
import type { DateRange } from '../analytics/periods.js';
import {
  bucket,
  changeBasis,
  comparedRange,
  relativeChange,
  total,
  totalWithin,
  zeroFill,
  type ChangeBasis,
  type Comparison,
  type Interval,
  type SeriesPoint,
} from '../analytics/series.js';
import { NO_UPSTREAM_CALL, builder } from './builder.js';
import { dailyBound, dailyRead, type Metric } from './daily.js';
import type { GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from './context.js';
import { DateRangeRef, rangeArgs, rangeProblems, resolveRange, type RangeInput } from './ranges.js';
import { WebsiteRef } from './website.js';

const SeriesMetricEnum = builder.enumType('SeriesMetric', {
  description: 'What a series counts.',
  values: {
    VISITORS: {
      value: 'VISITORS',
      description: 'Visitors per day (the VISITOR statistic); summed, they are visitor-days, not unique visitors.',
    },
    PAGEVIEWS: { value: 'PAGEVIEWS', description: 'Pageviews per day (the PAGEVIEW statistic).' },
  } as const,
});

const IntervalEnum = builder.enumType('Interval', {
  description: "The size of a series' buckets.",
  values: {
    DAY: { value: 'DAY', description: 'One point a day.' },
    WEEK: { value: 'WEEK', description: 'ISO weeks, Monday to Sunday.' },
    MONTH: { value: 'MONTH', description: 'Calendar months.' },
  } as const,
});

const ComparisonEnum = builder.enumType('Comparison', {
  description: 'What a summary is compared with.',
  values: {
    PREVIOUS_PERIOD: { value: 'PREVIOUS_PERIOD', description: 'The same number of days just before the range.' },
    PREVIOUS_YEAR: { value: 'PREVIOUS_YEAR', description: 'The same dates a year earlier (29 February as 28 February).' },
  } as const,
});

async function dailyPoints(
  ctx: GatewayContext,
  websiteId: string,
  metric: Metric,
  range: DateRange,
  info: GraphQLResolveInfo,
): Promise<SeriesPoint[]> {
  const { query, bound } = dailyRead(websiteId, metric, range);
  const rows = await ctx.source.everyStatRow(query, bound, 1, info);
  return zeroFill(rows, range);
}

/** Upstream pages a range (or, with `compare`, its compared range: a year back may be a day longer) can need. */
function pagesFor(args: RangeInput, ctx: GatewayContext, compare: Comparison | null = null): number {
  try {
    const asked = resolveRange(args, ctx.clock);
    return dailyBound(compare === null ? asked : comparedRange(asked, compare)).pages;
  } catch {
    return 1; // refused before anything runs (graphql/plugins/use-argument-checks.ts)
  }
}

interface SeriesShape {
  metric: Metric;
  interval: Interval;
  range: DateRange;
  points: SeriesPoint[];
}

const SeriesPointRef = builder.objectRef<SeriesPoint>('SeriesPoint').implement({
  description: 'One bucket of a series.',
  fields: (t) => ({
    date: t.expose('date', { type: 'Date', description: "The bucket's first day inside the range." }),
    count: t.exposeInt('count', { description: "The sum over the bucket's days (0 for days without data)." }),
  }),
});

const SeriesRef = builder.objectRef<SeriesShape>('Series').implement({
  description: 'A metric over a range, every bucket present (zero-filled), oldest first.',
  fields: (t) => ({
    metric: t.expose('metric', { type: SeriesMetricEnum, description: 'What is counted.' }),
    interval: t.expose('interval', { type: IntervalEnum, description: 'The size of the buckets.' }),
    range: t.expose('range', { type: DateRangeRef, description: 'The days covered.' }),
    total: t.int({
      description: 'The sum over the range (for VISITORS: visitor-days, not unique visitors).',
      complexity: NO_UPSTREAM_CALL,
      resolve: (series) => total(series.points),
    }),
    points: t.expose('points', { type: [SeriesPointRef], description: 'The buckets, oldest first.' }),
  }),
});

interface Totals {
  range: DateRange;
  visitors: number;
  pageviews: number;
  /** What the totals were summed from. */
  dailyVisitors: SeriesPoint[];
  dailyPageviews: SeriesPoint[];
}

interface TotalsPoint {
  date: string;
  visitors: number;
  pageviews: number;
}

const TotalsPointRef = builder.objectRef<TotalsPoint>('TotalsPoint').implement({
  description: 'Visitors and pageviews of one bucket of a range.',
  fields: (t) => ({
    date: t.expose('date', { type: 'Date', description: "The bucket's first day inside the range." }),
    visitors: t.exposeInt('visitors', { description: "Daily visitors summed over the bucket's days (0 for days without data)." }),
    pageviews: t.exposeInt('pageviews', { description: "Pageviews over the bucket's days (0 for days without data)." }),
  }),
});

const TotalsRef = builder.objectRef<Totals>('Totals').implement({
  description: 'Visitors and pageviews summed over a range.',
  fields: (t) => ({
    range: t.expose('range', { type: DateRangeRef, description: 'The days covered.' }),
    visitors: t.exposeInt('visitors', { description: 'Daily visitors summed: visitor-days, not unique visitors.' }),
    pageviews: t.exposeInt('pageviews', { description: 'Pageviews.' }),
    points: t.field({
      type: [TotalsPointRef],
      description:
        'Visitors and pageviews by day, ISO week or month, every bucket present, oldest first: a chart of the range (and of the compared one) from the reads its totals made, with no upstream call more.',
      args: { interval: t.arg({ type: IntervalEnum, defaultValue: 'DAY', description: 'The size of the buckets.' }) },
      complexity: NO_UPSTREAM_CALL,
      // An enum with a default: GraphQL's own validation is all the check it needs.
      extensions: { argumentProblems: () => [] },
      resolve: (totals, args) => {
        const interval = args.interval ?? 'DAY';
        const pageviews = bucket(totals.dailyPageviews, interval, totals.range);
        return bucket(totals.dailyVisitors, interval, totals.range).map((point, i) => ({
          date: point.date,
          visitors: point.count,
          pageviews: pageviews[i]?.count ?? 0,
        }));
      },
    }),
  }),
});

const ChangeBasisRef = builder.objectRef<ChangeBasis>('ChangeBasis').implement({
  description: "The days a summary's changes compare, as many on each side.",
  fields: (t) => ({
    current: t.expose('current', {
      type: DateRangeRef,
      description: 'Days of the range asked for: all of them, or those that are over when it is partial.',
    }),
    previous: t.expose('previous', {
      type: DateRangeRef,
      description: 'Days of the compared range: all of them, or as many from its first day when the range is partial.',
    }),
  }),
});

interface SummaryShape {
  current: Totals;
  previous: Totals | null;
  partial: boolean;
  basis: ChangeBasis | null;
}

/** null without a basis or when the previous days add up to 0. */
function changeOf(summary: SummaryShape, daily: (totals: Totals) => SeriesPoint[]): number | null {
  const { current, previous, basis } = summary;
  if (previous === null || basis === null) return null;
  return relativeChange(totalWithin(daily(current), basis.current), totalWithin(daily(previous), basis.previous));
}

const SummaryRef = builder.objectRef<SummaryShape>('Summary').implement({
  description: 'Totals of a range and, when asked, of the range it is compared with.',
  fields: (t) => ({
    current: t.expose('current', { type: TotalsRef, description: 'The range asked for.' }),
    previous: t.expose('previous', { type: TotalsRef, nullable: true, description: 'The compared range; null without `compare`.' }),
    partial: t.exposeBoolean('partial', {
      description:
        "Whether the range reaches today (in the install's time zone), whose figures still grow: its changes then compare only its days that are over with as many days of the compared range (`changeBasis`), and with none over (today alone) they are null.",
    }),
    changeBasis: t.field({
      type: ChangeBasisRef,
      nullable: true,
      description:
        'The days `visitorsChange` and `pageviewsChange` compare: both ranges whole, or the same part of each when the range is partial; null without `compare` or when no day of the range is over.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (summary) => (summary.previous === null ? null : summary.basis),
    }),
    visitorsChange: t.float({
      nullable: true,
      description:
        '(current - previous) / previous visitors over the days of `changeBasis`; null without a comparison, when no day is over, or when previous is 0.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (summary) => changeOf(summary, (totals) => totals.dailyVisitors),
    }),
    pageviewsChange: t.float({
      nullable: true,
      description:
        '(current - previous) / previous pageviews over the days of `changeBasis`; null without a comparison, when no day is over, or when previous is 0.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (summary) => changeOf(summary, (totals) => totals.dailyPageviews),
    }),
  }),
});

// A failed read waits for the others before the summary fails: a call still running would otherwise go
// on after the answer has left, missing from its `upstreamCalls`.
async function totalsOf(ctx: GatewayContext, websiteId: string, range: DateRange, info: GraphQLResolveInfo): Promise<Totals> {
  const visitors = dailyPoints(ctx, websiteId, 'VISITORS', range, info);
  const pageviews = dailyPoints(ctx, websiteId, 'PAGEVIEWS', range, info);
  await Promise.allSettled([visitors, pageviews]);
  const [dailyVisitors, dailyPageviews] = [await visitors, await pageviews];
  return { range, visitors: total(dailyVisitors), pageviews: total(dailyPageviews), dailyVisitors, dailyPageviews };
}

builder.objectFields(WebsiteRef, (t) => ({
  series: t.field({
    type: SeriesRef,
    description: 'Visitors or pageviews over a range, by day, ISO week or month; every bucket present, oldest first.',
    args: {
      metric: t.arg({ type: SeriesMetricEnum, required: true, description: 'What to count.' }),
      ...rangeArgs,
      interval: t.arg({ type: IntervalEnum, defaultValue: 'DAY', description: 'The size of the buckets.' }),
    },
    complexity: (args, ctx) => ({ field: pagesFor(args, ctx), multiplier: 1 }),
    extensions: { argumentProblems: rangeProblems },
    resolve: async (website, args, ctx, info) => {
      const range = resolveRange(args, ctx.clock);
      const interval = args.interval ?? 'DAY';
      const daily = await dailyPoints(ctx, website.id, args.metric, range, info);
      return { metric: args.metric, interval, range, points: bucket(daily, interval, range) };
    },
  }),
  summary: t.field({
    type: SummaryRef,
    description: 'Visitors and pageviews of a range and, with `compare`, of the previous period or year, with relative changes.',
    args: {
      ...rangeArgs,
      compare: t.arg({ type: ComparisonEnum, description: 'What to compare with; none by default.' }),
    },
    complexity: (args, ctx) => ({
      field: 2 * (pagesFor(args, ctx) + (args.compare ? pagesFor(args, ctx, args.compare) : 0)),
      multiplier: 1,
    }),
    extensions: { argumentProblems: rangeProblems },
    resolve: async (website, args, ctx, info) => {
      const range = resolveRange(args, ctx.clock);
      const compare: Comparison | null = args.compare ?? null;
      const compared = compare === null ? null : comparedRange(range, compare);
      const current = totalsOf(ctx, website.id, range, info);
      const previous = compared === null ? null : totalsOf(ctx, website.id, compared, info);
      await Promise.allSettled([current, previous]);
      const today = dayIn(ctx.clock.timeZone, ctx.clock.now());
      return {
        current: await current,
        previous: await previous,
        partial: range.to >= today,
        basis: compared === null ? null : changeBasis(range, compared, today),
      };
    },
  }),
}));
