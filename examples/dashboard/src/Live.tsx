// Today's figures over the subscription: the gateway pushes them again when they change, and each change
// is listed with the time it arrived.
import { useEffect } from 'react';
import { useSubscription } from 'urql';
import { problemOf } from './errors';
import { formatCount } from './format';
import type { LiveSubscription as LiveResult } from './gql/graphql';
import { LiveSubscription } from './operations';
import { ProblemBanner } from './ProblemBanner';

type Today = NonNullable<LiveResult['website']>;

interface Change {
  id: number;
  at: Date;
  what: string;
}

interface LiveState {
  latest: Today | null;
  changes: Change[];
}

const signed = (delta: number): string => `${delta > 0 ? '+' : ''}${formatCount(delta)}`;

/** What moved between two pushes, as "+3 visitors, +5 pageviews (/pricing +5)". */
function describe(before: Today, after: Today): string | null {
  const parts: string[] = [];
  const visitors = after.today.current.visitors - before.today.current.visitors;
  const pageviews = after.today.current.pageviews - before.today.current.pageviews;
  if (visitors !== 0) parts.push(`${signed(visitors)} visitors`);
  if (pageviews !== 0) parts.push(`${signed(pageviews)} pageviews`);
  const counts = new Map(before.pages.nodes.map((row) => [row.value, row.count]));
  const pages = after.pages.nodes
    .map((row) => ({ value: row.value, delta: row.count - (counts.get(row.value) ?? 0) }))
    .filter((row) => row.delta !== 0)
    .map((row) => `${row.value} ${signed(row.delta)}`);
  if (parts.length === 0 && pages.length === 0) return null;
  return `${parts.join(', ')}${pages.length > 0 ? ` (${pages.join(', ')})` : ''}`.trim();
}

/** Today's figures as the last push gave them. */
export interface LiveToday {
  date: string;
  visitors: number;
  pageviews: number;
}

export function Live({ websiteId, onToday }: { websiteId: string; onToday: (today: LiveToday) => void }) {
  const [{ data, error }] = useSubscription<LiveResult, LiveState>(
    { query: LiveSubscription, variables: { id: websiteId } },
    (state = { latest: null, changes: [] }, result) => {
      const next = result.website;
      if (!next) return state;
      const what = state.latest && describe(state.latest, next);
      return {
        latest: next,
        changes: what ? [{ id: (state.changes[0]?.id ?? 0) + 1, at: new Date(), what }, ...state.changes].slice(0, 10) : state.changes,
      };
    },
  );
  const today = data?.latest?.today.current;
  // biome-ignore lint/correctness/useExhaustiveDependencies: told once per push that moved a figure, not per render.
  useEffect(() => {
    if (today) onToday({ date: today.range.from, visitors: today.visitors, pageviews: today.pageviews });
  }, [today?.range.from, today?.visitors, today?.pageviews]);
  const problem = problemOf(error);
  const latest = data?.latest;
  return (
    <section className="live" aria-label="Live">
      <h2>
        Live today <span className={`dot ${latest && !problem ? 'on' : ''}`} aria-hidden="true" />
      </h2>
      {problem && <ProblemBanner problem={problem} />}
      {latest && (
        <p className="today">
          <strong data-live="visitors">{formatCount(latest.today.current.visitors)}</strong> visitors,{' '}
          <strong data-live="pageviews">{formatCount(latest.today.current.pageviews)}</strong> pageviews so far today
        </p>
      )}
      <ul className="changes">
        {data?.changes.map((change) => (
          <li key={change.id}>
            <time dateTime={change.at.toISOString()}>{change.at.toLocaleTimeString('en-GB')}</time> {change.what}
          </li>
        ))}
        {latest && data?.changes.length === 0 && <li className="waiting">Waiting for the next change…</li>}
      </ul>
    </section>
  );
}
