// The totals of the range against the previous period, and a chart of both, day by day.
import { useQuery } from 'urql';
import { Chart } from './Chart';
import { problemOf } from './errors';
import { formatChange, formatCount } from './format';
import { OverviewQuery, PreviousSeriesQuery } from './operations';
import { type Range, rangeVariables } from './periods';
import { ProblemBanner } from './ProblemBanner';

export function Overview({ websiteId, range }: { websiteId: string; range: Range }) {
  const [{ data, error }, refetch] = useQuery({ query: OverviewQuery, variables: { id: websiteId, ...rangeVariables(range) } });
  const website = data?.website;
  const previousRange = website?.summary.previous?.range;
  // The previous period's days are known once the summary has answered: a second request.
  const [previous] = useQuery({
    query: PreviousSeriesQuery,
    variables: { id: websiteId, from: previousRange?.from ?? '', to: previousRange?.to ?? '' },
    pause: previousRange === undefined,
  });
  const problem = problemOf(error ?? previous.error);
  if (problem) return <ProblemBanner problem={problem} onRetry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!website) return <section className="overview loading" aria-busy="true" />;
  const { current, visitorsChange, pageviewsChange } = website.summary;
  const before = previous.data?.website;
  return (
    <section className="overview" aria-label="Overview">
      <div className="totals">
        <Total label="Visitors" value={current.visitors} change={visitorsChange} />
        <Total label="Pageviews" value={current.pageviews} change={pageviewsChange} />
        <p className="range">
          {current.range.from} to {current.range.to}
          {previousRange ? `, against ${previousRange.from} to ${previousRange.to}` : ''}
        </p>
      </div>
      <Chart
        dates={website.visitors.points.map((point) => point.date)}
        series={[
          { label: 'Visitors', values: website.visitors.points.map((point) => point.count), color: '#2563eb' },
          { label: 'Pageviews', values: website.pageviews.points.map((point) => point.count), color: '#16a34a' },
          {
            label: 'Visitors, previous period',
            values: before?.visitors.points.map((point) => point.count),
            color: '#93c5fd',
            dashed: true,
          },
          {
            label: 'Pageviews, previous period',
            values: before?.pageviews.points.map((point) => point.count),
            color: '#86efac',
            dashed: true,
          },
        ]}
      />
    </section>
  );
}

function Total({ label, value, change }: { label: string; value: number; change: number | null | undefined }) {
  const direction = change === null || change === undefined || change === 0 ? 'flat' : change > 0 ? 'up' : 'down';
  return (
    <div className="total" data-metric={label.toLowerCase()}>
      <span className="label">{label}</span>
      <strong className="value">{formatCount(value)}</strong>
      <span className={`change ${direction}`}>{formatChange(change)} vs previous period</span>
    </div>
  );
}
