// The dashboard: the API key, a website of the key, a period, and what the gateway says about them.
import { useDeferredValue, useMemo, useState } from 'react';
import { Provider, useQuery } from 'urql';
import type { RuntimeConfig } from './config';
import { createClient } from './client';
import { problemOf } from './errors';
import { Live, type LiveToday } from './Live';
import { Overview } from './Overview';
import { PeriodPicker } from './PeriodPicker';
import { ProblemBanner } from './ProblemBanner';
import { TopList } from './TopList';
import { WebsitesQuery } from './operations';
import type { Range } from './periods';

/** The key lives as long as the tab: sessionStorage, never localStorage. */
const KEY_STORAGE = 'analytics-dashboard:api-key';

export function App({ config }: { config: RuntimeConfig }) {
  const [apiKey, setApiKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? config.demoKey ?? '');
  const client = useMemo(() => (apiKey === '' ? null : createClient(config.graphqlUrl, apiKey)), [config.graphqlUrl, apiKey]);
  const saveKey = (key: string) => {
    if (key === '') sessionStorage.removeItem(KEY_STORAGE);
    else sessionStorage.setItem(KEY_STORAGE, key);
    setApiKey(key);
  };
  return (
    <div className="app">
      <header className="bar">
        <h1>Analytics</h1>
        <KeyForm current={apiKey} isDemo={apiKey !== '' && apiKey === config.demoKey} onSave={saveKey} />
      </header>
      {client === null ? (
        <p className="hint">Enter the API key from your account page of the analytics service.</p>
      ) : (
        <Provider value={client}>
          <Dashboard key={apiKey} />
        </Provider>
      )}
    </div>
  );
}

function KeyForm({ current, isDemo, onSave }: { current: string; isDemo: boolean; onSave: (key: string) => void }) {
  const [draft, setDraft] = useState(current);
  return (
    <form
      className="key"
      onSubmit={(event) => {
        event.preventDefault();
        onSave(draft.trim());
      }}
    >
      <label>
        API key{isDemo ? ' (the sandbox’s demo key)' : ''}
        <input name="apiKey" type="password" autoComplete="off" value={draft} onChange={(event) => setDraft(event.target.value)} />
      </label>
      <button type="submit">Use key</button>
    </form>
  );
}

function Dashboard() {
  const [search, setSearch] = useState('');
  const deferredSearch = useDeferredValue(search);
  const [chosen, setChosen] = useState<string | null>(null);
  const [range, setRange] = useState<Range>({ period: 'LAST_30_DAYS' });
  /** Today's figures as the live view last got them: the overview of a range that holds today shows them. */
  const [liveToday, setLiveToday] = useState<LiveToday | null>(null);
  const [{ data, error }, refetch] = useQuery({ query: WebsitesQuery, variables: { search: deferredSearch || null } });
  const websites = data?.websites.nodes ?? [];
  const websiteId = chosen !== null && websites.some((website) => website.id === chosen) ? chosen : (websites[0]?.id ?? null);
  const problem = problemOf(error);
  const rangeKey = JSON.stringify(range);

  return (
    <main>
      <section className="controls" aria-label="What to show">
        <label>
          Search websites
          <input type="search" value={search} placeholder="domain" onChange={(event) => setSearch(event.target.value)} />
        </label>
        <label>
          Website
          <select name="website" value={websiteId ?? ''} onChange={(event) => setChosen(event.target.value)}>
            {websites.map((website) => (
              <option key={website.id} value={website.id}>
                {website.domain}
              </option>
            ))}
          </select>
        </label>
        <span className="count">{data ? `${data.websites.totalCount} websites` : ''}</span>
        <PeriodPicker range={range} onChange={setRange} />
      </section>
      {problem && <ProblemBanner problem={problem} onRetry={() => refetch({ requestPolicy: 'network-only' })} />}
      {data && websiteId === null && <p className="hint">No website matches.</p>}
      {websiteId !== null && (
        <>
          <Overview key={`${websiteId} ${rangeKey}`} websiteId={websiteId} range={range} liveToday={liveToday} />
          <div className="tops">
            <TopList key={`pages ${websiteId} ${rangeKey}`} title="Top pages" name="PAGE" websiteId={websiteId} range={range} />
            <TopList key={`referrers ${websiteId} ${rangeKey}`} title="Referrers" name="REFERRER" websiteId={websiteId} range={range} />
            <TopList key={`countries ${websiteId} ${rangeKey}`} title="Countries" name="COUNTRY" websiteId={websiteId} range={range} />
            <TopList key={`browsers ${websiteId} ${rangeKey}`} title="Browsers" name="BROWSER" websiteId={websiteId} range={range} />
          </div>
          <Live key={websiteId} websiteId={websiteId} onToday={setLiveToday} />
        </>
      )}
    </main>
  );
}
