// The totals of the range against the range it is compared with, and a chart of both, day by day: one
// request. A range not over yet (it reaches today) is compared by its days that are over with as many
// of the other range, and today alone is shown as partial, with no percentage: the API says which.
import { useQuery } from 'urql';
import { Chart } from './Chart';
import { problemOf } from './errors';
import { formatChange, formatCount } from './format';
import type { LiveToday } from './Live';
import { OverviewQuery } from './operations';
import { type Range, comparisonOf, rangeVariables } from './periods';
import { ProblemBanner } from './ProblemBanner';

interface DateRange {
  from: string;
  to: string;
}

/** "1 Mar to 14 Mar 2026": the days a figure covers. */
const days = ({ from, to }: DateRange): string => (from === to ? from : `${from} to ${to}`);

/**
 * The range's totals and days with today's as the live view last pushed them, when the range holds
 * today and the push is newer: the overview moves with the live view, with no request more (the read
 * cache may keep today's figures for a minute; the live poll reads them fresh).
 */
function withLiveToday<T extends { visitors: number; pageviews: number; points: LiveToday[] }>(totals: T, live: LiveToday | null): T {
  const index = live === null ? -1 : totals.points.findIndex((point) => point.date === live.date);
  const point = totals.points[index];
  if (live === null || point === undefined || live.visitors + live.pageviews <= point.visitors + point.pageviews) return totals;
  return {
    ...totals,
    visitors: totals.visitors + live.visitors - point.visitors,
    pageviews: totals.pageviews + live.pageviews - point.pageviews,
    points: totals.points.map((each, i) => (i === index ? live : each)),
  };
}

export function Overview({ websiteId, range, liveToday }: { websiteId: string; range: Range; liveToday: LiveToday | null }) {
  const compare = comparisonOf(range);
  const [{ data, error }, refetch] = useQuery({ query: OverviewQuery, variables: { id: websiteId, ...rangeVariables(range), compare } });
  const summary = data?.website?.summary;
  const problem = problemOf(error);
  if (problem) return <ProblemBanner problem={problem} onRetry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!summary) return <section className="overview loading" aria-busy="true" />;
  const { previous, changeBasis, visitorsChange, pageviewsChange, partial } = summary;
  const current = withLiveToday(summary.current, liveToday);
  const against =
    previous === null || previous === undefined ? '' : compare === 'PREVIOUS_YEAR' ? previous.range.from.slice(0, 4) : 'previous period';
  // What the percentages compare: whole ranges, the same part of each, or nothing yet (today alone).
  const basis =
    changeBasis === null || changeBasis === undefined
      ? 'partial: no day of it is over yet, nothing to compare'
      : partial
        ? `vs ${against}, same days so far`
        : `vs ${against}`;
  return (
    <section className="overview" aria-label="Overview" data-partial={partial ? 'true' : 'false'}>
      <div className="totals">
        <Total label="Visitors" value={current.visitors} change={visitorsChange} basis={basis} partial={changeBasis == null} />
        <Total label="Pageviews" value={current.pageviews} change={pageviewsChange} basis={basis} partial={changeBasis == null} />
        <p className="range">
          {days(current.range)}
          {partial ? ' (so far: today is not over)' : ''}
          {previous ? `, against ${days(previous.range)}` : ''}
          {partial && changeBasis ? `; changes compare ${days(changeBasis.current)} with ${days(changeBasis.previous)}` : ''}
        </p>
      </div>
      <Chart
        dates={current.points.map((point) => point.date)}
        series={[
          { label: 'Visitors', values: current.points.map((point) => point.visitors), color: '#2563eb' },
          { label: 'Pageviews', values: current.points.map((point) => point.pageviews), color: '#16a34a' },
          {
            label: `Visitors, ${against}`,
            values: previous?.points.map((point) => point.visitors),
            color: '#93c5fd',
            dashed: true,
          },
          {
            label: `Pageviews, ${against}`,
            values: previous?.points.map((point) => point.pageviews),
            color: '#86efac',
            dashed: true,
          },
        ]}
      />
    </section>
  );
}

function Total({
  label,
  value,
  change,
  basis,
  partial,
}: {
  label: string;
  value: number;
  change: number | null | undefined;
  basis: string;
  partial: boolean;
}) {
  const direction = change === null || change === undefined || change === 0 ? 'flat' : change > 0 ? 'up' : 'down';
  return (
    <div className="total" data-metric={label.toLowerCase()}>
      <span className="label">{label}</span>
      <strong className="value">{formatCount(value)}</strong>
      <span className={`change ${partial ? 'partial' : direction}`}>{partial ? basis : `${formatChange(change)} ${basis}`}</span>
    </div>
  );
}
