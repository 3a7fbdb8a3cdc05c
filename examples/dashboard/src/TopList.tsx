// One statistic's rows, ten at a time: "Load more" asks for the next page and shows it under the others.
import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { problemOf } from './errors';
import { formatCount } from './format';
import type { StatName } from './gql/graphql';
import { TopQuery } from './operations';
import { type Range, rangeVariables } from './periods';
import { ProblemBanner } from './ProblemBanner';

interface Props {
  title: string;
  name: StatName;
  websiteId: string;
  range: Range;
}

export function TopList(props: Props) {
  const [pages, setPages] = useState(1);
  const [top, setTop] = useState(0);
  return (
    <section className="top" aria-label={props.title} data-stat={props.name}>
      <h2>{props.title}</h2>
      <ol>
        {Array.from({ length: pages }, (_, index) => index + 1).map((page) => (
          <TopPage
            key={page}
            {...props}
            page={page}
            top={top}
            onTop={page === 1 ? setTop : undefined}
            onMore={page === pages ? () => setPages(pages + 1) : undefined}
          />
        ))}
      </ol>
    </section>
  );
}

interface PageProps extends Props {
  page: number;
  /** The largest count, the first row's: bars are drawn against it. */
  top: number;
  onTop: ((count: number) => void) | undefined;
  /** Set on the last page shown: its "Load more" button shows the next. */
  onMore: (() => void) | undefined;
}

function TopPage({ name, websiteId, range, page, top, onTop, onMore }: PageProps) {
  const [{ data, error, fetching }, refetch] = useQuery({
    query: TopQuery,
    variables: { id: websiteId, name, page, ...rangeVariables(range) },
  });
  const stats = data?.website?.stats;
  const first = stats?.nodes[0]?.count ?? 0;
  useEffect(() => onTop?.(first), [onTop, first]);
  const problem = problemOf(error);
  if (problem)
    return (
      <li className="row-problem">
        <ProblemBanner problem={problem} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      </li>
    );
  if (!stats) return fetching ? <li className="loading">…</li> : null;
  return (
    <>
      {page === 1 && stats.nodes.length === 0 && <li className="empty">Nothing in this period</li>}
      {stats.nodes.map((row) => (
        <li key={row.value} className="row">
          <span className="bar" style={{ width: `${top > 0 ? (100 * row.count) / top : 0}%` }} />
          <span className="name" title={row.value}>
            {row.label}
          </span>
          <span className="number">{formatCount(row.count)}</span>
        </li>
      ))}
      {onMore && stats.pageInfo.hasNextPage && (
        <li className="more">
          <button type="button" onClick={onMore}>
            Load more
          </button>
        </li>
      )}
    </>
  );
}
