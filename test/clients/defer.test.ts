// @defer and @stream (yoga's defer-stream plugin), as multipart/mixed and as server-sent events, read
// raw with fetch and with Apollo Client 4. The dashboard with its statistics deferred answers the
// website first, then the statistics; the look-ahead still starts every statistic together with the
// website; the usage figures come with the final part; the cost limit counts deferred fields too.
import { format } from 'node:util';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql, type TypedDocumentNode } from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { tap } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_1, dataOf, present, useStack } from '../fixture.js';
import { apolloCacheConfig } from './cache-config.js';

loadDevMessages();
loadErrorMessages();

const stack = useStack();
afterEach(() => {
  stack.sandbox.setKnobs({ latencyMs: 0 });
  vi.restoreAllMocks();
});

// --- documents -------------------------------------------------------------------------------------

const RANGE = 'from: "2026-02-14", to: "2026-03-15"';
const STATISTICS = `
  visitors: stats(name: VISITOR, ${RANGE}, sortBy: VALUE, sort: ASC, perPage: 50) { nodes { value count } }
  pages: stats(name: PAGE, ${RANGE}) { nodes { value count } totalCount }
  countries: stats(name: COUNTRY, ${RANGE}) { nodes { value count } }
  browsers: stats(name: BROWSER, ${RANGE}, perPage: 25) { nodes { value count } }
  referrers: stats(name: REFERRER, ${RANGE}) { nodes { value count } pageInfo { hasNextPage } }`;
const STATISTIC_NAMES = ['visitors', 'pages', 'countries', 'browsers', 'referrers'];

/** The dashboard of docs/clients.md with its five statistics deferred: 1 + 5 upstream calls. */
const DEFERRED_DASHBOARD = `query DeferredDashboard { website(id: "1") { domain privacy ... @defer { ${STATISTICS} } } }`;
/** The same, nothing deferred. */
const DASHBOARD = `query Dashboard { website(id: "1") { domain privacy ${STATISTICS} } }`;

const STREAMED_LIST = '{ websites(perPage: 10, sortBy: DOMAIN, sort: ASC) { totalCount nodes @stream(initialCount: 2) { id domain } } }';
const LIST = '{ websites(perPage: 10, sortBy: DOMAIN, sort: ASC) { totalCount nodes { id domain } } }';

// --- the raw answer ------------------------------------------------------------------------------

type Path = (string | number)[];
type JsonObject = Record<string, unknown>;

/** One part of an incremental answer (the 2022-08-24 format yoga speaks, as Apollo's handler reads it). */
interface Part {
  data?: JsonObject | null;
  errors?: { message: string; extensions?: JsonObject }[];
  incremental?: { data?: JsonObject; items?: unknown[]; path: Path; errors?: unknown[] }[];
  hasNext?: boolean;
  extensions?: JsonObject;
}

/** POSTs `query` asking for `accept`; answers the status, content type and body. */
async function post(query: string, accept: string): Promise<{ status: number; contentType: string; body: string }> {
  const response = await fetch(stack.endpoint, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_1}`, 'content-type': 'application/json', accept },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

/** The JSON parts of a multipart/mixed body (RFC 2046: delimiter CRLF--boundary, close delimiter with "--"). */
function multipartParts(contentType: string, body: string): Part[] {
  const boundary = present(/boundary="?([^";]+)"?/.exec(contentType)?.[1], 'the boundary');
  const [, ...rest] = `\r\n${body}`.split(`\r\n--${boundary}`);
  return rest
    .filter((segment) => !segment.startsWith('--'))
    .map((segment) => {
      const blank = segment.indexOf('\r\n\r\n');
      expect(blank, 'a part has headers, then a blank line').toBeGreaterThanOrEqual(0);
      expect(segment.slice(0, blank).toLowerCase()).toContain('content-type: application/json');
      return JSON.parse(segment.slice(blank + 4)) as Part;
    });
}

/** The data of the `next` events of a text/event-stream body, after which a `complete` event must come. */
function eventStreamParts(body: string): Part[] {
  const events = body
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines
        .find((line) => line.startsWith('event:'))
        ?.slice('event:'.length)
        .trim();
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trim())
        .join('\n');
      return { event, data };
    });
  expect(events.at(-1)?.event).toBe('complete');
  return events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data) as Part);
}

/** Follows `path` from `root` to the object or list it names. */
function at(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
}

/** The whole result the parts add up to: deferred data merged at its path, streamed items put in place. */
function assemble(parts: Part[]): JsonObject {
  const [initial, ...later] = parts;
  const result = structuredClone(present(initial?.data, 'the initial data'));
  for (const part of later) {
    for (const increment of part.incremental ?? []) {
      if (increment.data !== undefined) Object.assign(at(result, increment.path) as JsonObject, increment.data);
      if (increment.items !== undefined) {
        const index = present(increment.path.at(-1), 'the index') as number;
        (at(result, increment.path.slice(0, -1)) as unknown[]).splice(index, increment.items.length, ...increment.items);
      }
    }
  }
  return result;
}

/** The non-incremental answer of `query`, for comparison. */
async function whole(query: string): Promise<JsonObject> {
  return dataOf(await stack.gql<JsonObject>(query));
}

function expectDashboardParts(parts: Part[]): void {
  expect(parts.length).toBeGreaterThanOrEqual(2);
  const [first, ...later] = parts;
  // The website first, without its statistics...
  expect(first?.hasNext).toBe(true);
  const website = present(first?.data?.website, 'the website of the first part') as JsonObject;
  expect(website).toEqual({ domain: 'acme-analytics.com', privacy: expect.any(String) });
  // ...then the statistics, at the website's path; the last part says it is the last.
  const increments = later.flatMap((part) => part.incremental ?? []);
  expect(increments.map((increment) => increment.path)).toEqual(increments.map(() => ['website']));
  expect(increments.flatMap((increment) => Object.keys(increment.data ?? {})).sort()).toEqual([...STATISTIC_NAMES].sort());
  expect(later.at(-1)?.hasNext).toBe(false);
  // The usage figures of the whole operation, with the final part.
  expect(later.at(-1)?.extensions).toMatchObject({ cost: { requested: 6, limit: 100 }, upstreamCalls: 6 });
}

describe('the dashboard with its statistics deferred, read raw', () => {
  it('multipart/mixed: the website, then the statistics, then nothing; usage with the final part; same data as undeferred', async () => {
    const answer = await post(DEFERRED_DASHBOARD, 'multipart/mixed');
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^multipart\/mixed/);
    const parts = multipartParts(answer.contentType, answer.body);
    expectDashboardParts(parts);
    expect(assemble(parts)).toEqual(await whole(DASHBOARD));
  });

  it('multipart/mixed as Apollo asks for it (deferSpec=20220824)', async () => {
    const answer = await post(
      DEFERRED_DASHBOARD,
      'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9',
    );
    expect(answer.contentType).toMatch(/^multipart\/mixed/);
    expectDashboardParts(multipartParts(answer.contentType, answer.body));
  });

  it('text/event-stream: the same parts as server-sent events, then complete', async () => {
    const answer = await post(DEFERRED_DASHBOARD, 'text/event-stream');
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^text\/event-stream/);
    const parts = eventStreamParts(answer.body);
    expectDashboardParts(parts);
    expect(assemble(parts)).toEqual(await whole(DASHBOARD));
  });

  it('the look-ahead starts the five statistics together with the website: 1 + 5 upstream calls in one wave', async () => {
    stack.sandbox.setKnobs({ latencyMs: 60 });
    const answer = await post(DEFERRED_DASHBOARD, 'multipart/mixed');
    expectDashboardParts(multipartParts(answer.contentType, answer.body));
    const { entries } = stack.sandbox.log;
    expect(entries.map((entry) => `${entry.method} ${entry.path}`).sort()).toEqual([
      'GET /api/v1/stats/1',
      'GET /api/v1/stats/1',
      'GET /api/v1/stats/1',
      'GET /api/v1/stats/1',
      'GET /api/v1/stats/1',
      'GET /api/v1/websites/1',
    ]);
    // Each call takes 60 ms: all six were in flight at once, every one started before any ended.
    expect(stack.sandbox.log.maxInFlight).toBe(6);
    const lastStart = Math.max(...entries.map((entry) => entry.startedAt));
    const firstEnd = Math.min(...entries.map((entry) => present(entry.endedAt, 'endedAt')));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('the cost limit counts deferred fields: a deferred over-cost operation is refused, nothing reaches the upstream', async () => {
    // 1 for the list, plus 100 websites x 1 statistic deferred: 101 > 100. Undeferred alone, it costs 1.
    const query = `{ websites(perPage: 100) { totalCount nodes { id ... @defer { visitors: stats(name: VISITOR, ${RANGE}) { totalCount } } } } }`;
    const answer = await post(query, 'multipart/mixed');
    const parts = answer.contentType.startsWith('multipart/mixed')
      ? multipartParts(answer.contentType, answer.body)
      : [JSON.parse(answer.body) as Part];
    expect(parts).toHaveLength(1);
    const [refusal] = parts;
    expect(refusal?.data ?? null).toBeNull();
    expect(refusal?.errors?.map((error) => error.extensions)).toEqual([
      expect.objectContaining({ code: 'COST_LIMIT_EXCEEDED', cost: 101, costLimit: 100 }),
    ]);
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('@stream, read raw', () => {
  it.each(['multipart/mixed', 'text/event-stream'])(
    '%s: the first two websites, then the others in order; usage with the final part; same list as unstreamed',
    async (accept) => {
      const answer = await post(STREAMED_LIST, accept);
      expect(answer.status).toBe(200);
      const parts = accept === 'multipart/mixed' ? multipartParts(answer.contentType, answer.body) : eventStreamParts(answer.body);
      const [first, ...later] = parts;
      expect(first?.hasNext).toBe(true);
      expect((at(first?.data, ['websites', 'nodes']) as unknown[]).length).toBe(2);
      const increments = later.flatMap((part) => part.incremental ?? []);
      expect(increments.length).toBeGreaterThan(0);
      expect(increments.every((increment) => increment.items !== undefined && increment.path[1] === 'nodes')).toBe(true);
      expect(later.at(-1)?.hasNext).toBe(false);
      expect(later.at(-1)?.extensions).toMatchObject({ cost: { requested: 1, limit: 100 }, upstreamCalls: 1 });
      expect(assemble(parts)).toEqual(await whole(LIST));
    },
  );
});

// --- Apollo Client 4 -----------------------------------------------------------------------------

interface StatRow {
  value: string;
  count: number;
}
interface DeferredDashboardData {
  website: {
    domain: string;
    privacy: string;
    visitors?: { nodes: StatRow[] };
    pages?: { nodes: StatRow[]; totalCount: number };
    countries?: { nodes: StatRow[] };
    browsers?: { nodes: StatRow[] };
    referrers?: { nodes: StatRow[]; pageInfo: { hasNextPage: boolean } };
  } | null;
}

describe('Apollo Client 4 over @defer (incrementalHandler: Defer20220824Handler, multipart)', () => {
  it('shows the website first, then the statistics; the final chunk carries the usage; no warning', async () => {
    const messages: string[] = [];
    const record = (...args: unknown[]): void => {
      messages.push(format(...args));
    };
    vi.spyOn(console, 'warn').mockImplementation(record);
    vi.spyOn(console, 'error').mockImplementation(record);

    // What the link chain hands to the client: the raw chunks, extensions included.
    const chunks: ApolloLink.Result[] = [];
    const accepts: string[] = [];
    const observe = new ApolloLink((operation, forward) => forward(operation).pipe(tap((chunk) => chunks.push(chunk))));
    const http = new HttpLink({
      uri: stack.endpoint,
      headers: { authorization: `Bearer ${KEY_1}` },
      fetch: (input, init) => {
        accepts.push(new Headers(init?.headers).get('accept') ?? '');
        return fetch(input, init);
      },
    });
    const client = new ApolloClient({
      link: ApolloLink.from([observe, http]),
      cache: new InMemoryCache(apolloCacheConfig),
      incrementalHandler: new Defer20220824Handler(),
    });

    const query: TypedDocumentNode<DeferredDashboardData, Record<string, never>> = gql(DEFERRED_DASHBOARD);
    const seen: { dataState: string; statistics: string[]; domain: string | undefined }[] = [];
    let final: DeferredDashboardData | undefined;
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery({ query }).subscribe({
        next: (result) => {
          if (result.error !== undefined) reject(result.error);
          if (result.data === undefined) return;
          const website = result.data.website ?? undefined;
          seen.push({
            dataState: result.dataState,
            domain: website?.domain,
            statistics: STATISTIC_NAMES.filter((name) => website !== undefined && name in website),
          });
          if (result.dataState === 'complete') {
            final = result.data;
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });

    expect(stack.sandbox.log.count).toBe(6); // one wave, as without @defer
    expect(accepts[0]).toContain('multipart/mixed;deferSpec=20220824');
    expect(seen.at(0)).toEqual({ dataState: 'streaming', domain: 'acme-analytics.com', statistics: [] });
    expect(seen.at(-1)).toEqual({ dataState: 'complete', domain: 'acme-analytics.com', statistics: STATISTIC_NAMES });
    expect(final).toEqual(await whole(DASHBOARD).then((data) => withTypenames(data)));

    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.at(-1)).toMatchObject({ hasNext: false, extensions: { cost: { requested: 6, limit: 100 }, upstreamCalls: 6 } });
    expect(messages).toEqual([]);
  });
});

/** `data` as Apollo gives it: with the __typename it adds to every selection set. */
function withTypenames(data: JsonObject): JsonObject {
  const typenames: Record<string, string> = {
    website: 'Website',
    visitors: 'StatList',
    pages: 'StatList',
    countries: 'StatList',
    browsers: 'StatList',
    referrers: 'StatList',
    nodes: 'Stat',
    pageInfo: 'PageInfo',
  };
  const walk = (value: unknown, key: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, key));
    if (value === null || typeof value !== 'object') return value;
    const typename = typenames[key];
    const entries = Object.entries(value).map(([k, v]) => [k, walk(v, k)] as const);
    return Object.fromEntries(typename === undefined ? entries : [['__typename', typename], ...entries]);
  };
  return walk(data, '') as JsonObject;
}
