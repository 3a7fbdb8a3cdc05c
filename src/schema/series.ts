// Time series and summaries of a website: the upstream's per-day visitor and pageview rows, every page
// read (100 rows a page, the pages after the first in parallel, never more than the range's days can
// fill), zero-filled, bucketed into weeks or months, totalled and compared with another period.
import type { DateRange } from '../analytics/periods.js';
import {
  bucket,
  comparedRange,
  relativeChange,
  total,
  zeroFill,
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

/** Every day of `range` for a metric: every page of the upstream's daily rows, zero-filled. */
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

/**
 * Upstream pages a range can need (its dailyBound). With `compare`, those of the compared range,
 * which a year back can be a day longer (29 February).
 */
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
    range: t.field({
      type: DateRangeRef,
      description: 'The days covered.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (series) => series.range,
    }),
    total: t.int({
      description: 'The sum over the range (for VISITORS: visitor-days, not unique visitors).',
      complexity: NO_UPSTREAM_CALL,
      resolve: (series) => total(series.points),
    }),
    points: t.field({
      type: [SeriesPointRef],
      description: 'The buckets, oldest first.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (series) => series.points,
    }),
  }),
});

interface Totals {
  range: DateRange;
  visitors: number;
  pageviews: number;
}

const TotalsRef = builder.objectRef<Totals>('Totals').implement({
  description: 'Visitors and pageviews summed over a range.',
  fields: (t) => ({
    range: t.field({
      type: DateRangeRef,
      description: 'The days covered.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (totals) => totals.range,
    }),
    visitors: t.exposeInt('visitors', { description: 'Daily visitors summed: visitor-days, not unique visitors.' }),
    pageviews: t.exposeInt('pageviews', { description: 'Pageviews.' }),
  }),
});

interface SummaryShape {
  current: Totals;
  previous: Totals | null;
}

const SummaryRef = builder.objectRef<SummaryShape>('Summary').implement({
  description: 'Totals of a range and, when asked, of the range it is compared with.',
  fields: (t) => ({
    current: t.field({
      type: TotalsRef,
      description: 'The range asked for.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (summary) => summary.current,
    }),
    previous: t.field({
      type: TotalsRef,
      nullable: true,
      description: 'The compared range; null without `compare`.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (summary) => summary.previous,
    }),
    visitorsChange: t.float({
      nullable: true,
      description: '(current - previous) / previous visitors; null without a comparison or when previous is 0.',
      complexity: NO_UPSTREAM_CALL,
      resolve: ({ current, previous }) => (previous ? relativeChange(current.visitors, previous.visitors) : null),
    }),
    pageviewsChange: t.float({
      nullable: true,
      description: '(current - previous) / previous pageviews; null without a comparison or when previous is 0.',
      complexity: NO_UPSTREAM_CALL,
      resolve: ({ current, previous }) => (previous ? relativeChange(current.pageviews, previous.pageviews) : null),
    }),
  }),
});

// The reads of a summary run in parallel, and a failed one waits for the others before the summary
// fails: a call still running (or waiting its turn) would otherwise go on after the answer has left,
// missing from its `upstreamCalls`.
async function totalsOf(ctx: GatewayContext, websiteId: string, range: DateRange, info: GraphQLResolveInfo): Promise<Totals> {
  const visitors = dailyPoints(ctx, websiteId, 'VISITORS', range, info);
  const pageviews = dailyPoints(ctx, websiteId, 'PAGEVIEWS', range, info);
  await Promise.allSettled([visitors, pageviews]);
  return { range, visitors: total(await visitors), pageviews: total(await pageviews) };
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
    // Every upstream page the range can need, 100 days a page.
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
      const current = totalsOf(ctx, website.id, range, info);
      const previous = compare === null ? null : totalsOf(ctx, website.id, comparedRange(range, compare), info);
      await Promise.allSettled([current, previous]);
      return { current: await current, previous: await previous };
    },
  }),
}));
