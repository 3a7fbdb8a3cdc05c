// The read cache (src/cache/read-cache.ts) over real HTTP: the gateway and the sandbox on ephemeral
// ports, the gateway's cache clock pinned (GatewayOptions.now) so that "today" is the sandbox's
// 2026-03-15 and time passes without sleeping. Each test starts its own stack: what one test cached
// must not answer another.
import { createHash, createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ScriptedFault, SandboxOptions } from '../../src/sandbox/types.js';
import { MemoryCacheStore } from '../../src/cache/memory-store.js';
import {
  CREATE_WEBSITE,
  KEY_1,
  KEY_2,
  TODAY,
  UPDATE_WEBSITE,
  dataOf,
  firstError,
  postGraphQL,
  metricOf,
  present,
  restCalls,
  startStack,
  until,
  type GraphQLResponse,
  type Stack,
  type WebsiteData,
} from '../fixture.js';

/** The gateway's cache clock, moved by hand. */
class Clock {
  constructor(private at: number) {}
  readonly now = (): number => this.at;
  advance(seconds: number): void {
    this.at += seconds * 1000;
  }
}

/** Midday of the sandbox's today, in UTC. */
const NOON = Date.parse(`${TODAY}T12:00:00Z`);

const stacks: Stack[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

interface CachedStackOptions {
  /** Default: at NOON. */
  clock?: Clock;
  sandbox?: SandboxOptions;
  /** Request log lines (JSON objects) are pushed here. */
  logLines?: Record<string, unknown>[];
}

/** A stack with the cache on (plus `env`), closed after the test. */
async function cachedStack(env: Record<string, string> = {}, options: CachedStackOptions = {}): Promise<{ stack: Stack; clock: Clock }> {
  const clock = options.clock ?? new Clock(NOON);
  const lines = options.logLines;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines?.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const stack = await startStack({
    env: { CACHE: 'on', ...env },
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    gateway: { now: clock.now, ...(lines ? { logger: pino({ level: 'info', base: null }, sink) } : {}) },
  });
  stacks.push(stack);
  return { stack, clock };
}

interface CacheFigures {
  hits: number;
  misses: number;
  stale: number;
}

/** `extensions.cache`, which every executed response carries. */
function cacheOf(response: GraphQLResponse<unknown>): CacheFigures {
  const figures = response.extensions?.cache;
  expect(figures, 'extensions.cache').toEqual({ hits: expect.any(Number), misses: expect.any(Number), stale: expect.any(Number) });
  return figures as CacheFigures;
}

/** One request, with the REST calls the sandbox saw for it. */
async function ask<T>(
  stack: Stack,
  query: string,
  variables: Record<string, unknown> = {},
  key: string | null = KEY_1,
): Promise<{ response: GraphQLResponse<T>; calls: string[]; cache: CacheFigures }> {
  stack.sandbox.log.reset();
  const response = await stack.gql<T>(query, variables, key);
  return { response, calls: restCalls(stack.sandbox), cache: cacheOf(response) };
}

interface WebsiteResult<W> {
  website: W | null;
}
interface TotalCount {
  totalCount: number;
}
type IdDomain = WebsiteResult<{ id: string; domain: string }>;

// KEY_1 owns websites 1, 2, 4, 5, 7, 8 and 10; KEY_2 owns 3, 6 and 9 (the sandbox's seed).
const WEBSITE = (id: string): string => `{ website(id: "${id}") { id domain } }`;
const WEBSITE_CALL = (id: string): string => `GET /api/v1/websites/${id}`;
/** The call that re-validates a key: the first page of its websites. */
const VALIDATION_CALL = 'GET /api/v1/websites?page=1&per_page=10&sort=desc&sort_by=id';

const cacheControl = (response: { headers: Headers }): string | null => response.headers.get('cache-control');
const varyOf = (response: { headers: Headers }): string[] =>
  (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());

describe('per key', () => {
  it('two keys, same query: no cross-key hit; each key is answered from its own entries', async () => {
    const { stack } = await cachedStack();
    const query = '{ websites { totalCount nodes { id } } }';
    const first = await ask<{ websites: TotalCount }>(stack, query);
    expect(first.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    expect(dataOf(first.response).websites.totalCount).toBe(7);

    const again = await ask<{ websites: TotalCount }>(stack, query);
    expect(again.cache).toEqual({ hits: 1, misses: 0, stale: 0 });
    expect(again.calls).toEqual([]);

    const other = await ask<{ websites: TotalCount }>(stack, query, {}, KEY_2);
    expect(other.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    expect(dataOf(other.response).websites.totalCount).toBe(3);
    expect(stack.sandbox.log.entries.map((entry) => entry.headers.authorization)).toEqual([`Bearer ${KEY_2}`]);

    const otherAgain = await ask<{ websites: TotalCount }>(stack, query, {}, KEY_2);
    expect(dataOf(otherAgain.response).websites.totalCount).toBe(3);
    expect(otherAgain.calls).toEqual([]);
  });

  it("KEY_2 reading KEY_1's cached website is still NOT_FOUND, from the upstream (and nothing of it is cached)", async () => {
    const { stack } = await cachedStack();
    expect(dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response).website?.domain).toBe('acme-analytics.com');
    expect((await ask<IdDomain>(stack, WEBSITE('1'))).calls).toEqual([]); // KEY_1's entry is there

    for (let attempt = 0; attempt < 2; attempt++) {
      const stranger = await ask<IdDomain>(stack, WEBSITE('1'), {}, KEY_2);
      expect(stranger.calls).toEqual([WEBSITE_CALL('1')]);
      expect(stranger.response.data?.website).toBeNull();
      expect(firstError(stranger.response).extensions?.code).toBe('NOT_FOUND');
      expect(stranger.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    }
  });

  it('the raw key is never stored: store keys and names hold a keyed hash (HMAC with the store secret) of it', async () => {
    const spies = (['get', 'set', 'delete', 'counter', 'bump', 'mark', 'marked'] as const).map((method) =>
      vi.spyOn(MemoryCacheStore.prototype, method),
    );
    const setSpy = vi.spyOn(MemoryCacheStore.prototype, 'set');
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '10' });
    dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(11); // the next hit re-validates the key
    dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    dataOf((await ask<{ websites: TotalCount }>(stack, '{ websites { totalCount } }', {}, KEY_2)).response);
    const update = await ask<{ updateWebsite: { userErrors: unknown[] } }>(stack, UPDATE_WEBSITE, { id: '1', input: { favorite: true } });
    expect(dataOf(update.response).updateWebsite.userErrors).toEqual([]);

    const store = setSpy.mock.contexts[0];
    if (!(store instanceof MemoryCacheStore)) throw new Error('the gateway did not write to a MemoryCacheStore');
    const secret = await store.secret();
    const names = spies.flatMap((spy) => spy.mock.calls.map((call) => String(call[0])));
    const values = setSpy.mock.calls.map((call) => JSON.stringify(call[1]));
    expect(names.length).toBeGreaterThan(10);
    for (const key of [KEY_1, KEY_2]) {
      const keyId = createHmac('sha256', secret).update(`Bearer ${key}`).digest('base64url').slice(0, 32);
      expect(names.filter((name) => name.includes(keyId)).length, `names with the hash of ${key}`).toBeGreaterThan(0);
      for (const text of [...names, ...values]) {
        expect(text).not.toContain(key);
      }
    }
    for (const text of names) expect(text.toLowerCase()).not.toContain('bearer');
  });
});

describe('lifetimes by meaning', () => {
  const SETTLED = 'settled: stats(name: COUNTRY, from: "2026-02-14", to: "2026-03-14") { totalCount }';
  const RECENT = 'recent: stats(name: COUNTRY, from: "2026-03-01", to: "2026-03-15") { totalCount }';
  const SETTLED_CALL = 'GET /api/v1/stats/1?from=2026-02-14&name=country&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-14';
  const RECENT_CALL = 'GET /api/v1/stats/1?from=2026-03-01&name=country&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-15';
  type Stats = WebsiteResult<{ id: string; settled: TotalCount; recent: TotalCount }>;
  const DASH = `{ website(id: "1") { id ${SETTLED} ${RECENT} } }`;

  it('statistics ending before today are kept CACHE_TTL_SETTLED_S; those reaching today and websites CACHE_TTL_RECENT_S', async () => {
    const { stack, clock } = await cachedStack({ CACHE_TTL_SETTLED_S: '3600', CACHE_TTL_RECENT_S: '60', KEY_RECHECK_S: '86400' });
    const first = await ask<Stats>(stack, DASH);
    expect(first.cache).toEqual({ hits: 0, misses: 3, stale: 0 });
    expect([...first.calls].sort()).toEqual([WEBSITE_CALL('1'), SETTLED_CALL, RECENT_CALL].sort());
    const answer = dataOf(first.response).website;
    expect(cacheControl(first.response)).toBe('private, max-age=60'); // the shortest lifetime used

    clock.advance(59);
    const fresh = await ask<Stats>(stack, DASH);
    expect(fresh.calls).toEqual([]);
    expect(fresh.cache).toEqual({ hits: 3, misses: 0, stale: 0 });
    expect(dataOf(fresh.response).website).toEqual(answer);
    expect(cacheControl(fresh.response)).toBe('private, max-age=1');

    clock.advance(2); // 61 s: the recent ones expired, the settled one is still cached
    const later = await ask<Stats>(stack, DASH);
    expect([...later.calls].sort()).toEqual([WEBSITE_CALL('1'), RECENT_CALL].sort());
    expect(later.cache).toEqual({ hits: 1, misses: 2, stale: 0 });
    expect(dataOf(later.response).website).toEqual(answer);

    clock.advance(3600 - 61 - 1); // 1 s before the settled lifetime ends
    expect((await ask<Stats>(stack, `{ website(id: "1") { id ${SETTLED} } }`)).calls).toEqual([WEBSITE_CALL('1')]);
    clock.advance(2); // past it (the website, read 2 s ago, is fresh)
    const expired = await ask<Stats>(stack, `{ website(id: "1") { id ${SETTLED} } }`);
    expect(expired.calls).toEqual([SETTLED_CALL]);
    expect(expired.cache).toEqual({ hits: 1, misses: 1, stale: 0 });
  });

  it('the default lifetimes: 86400 s settled, 60 s recent (lists included)', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '86400' });
    const LIST = '{ websites { totalCount } }';
    expect((await ask<Stats>(stack, DASH)).cache.misses).toBe(3);
    expect((await ask<{ websites: TotalCount }>(stack, LIST)).cache.misses).toBe(1);
    clock.advance(60);
    expect((await ask<{ websites: TotalCount }>(stack, LIST)).calls).toEqual([VALIDATION_CALL]); // the list expired at 60 s
    expect((await ask<Stats>(stack, DASH)).cache).toEqual({ hits: 1, misses: 2, stale: 0 });
    clock.advance(86_400 - 60 - 1);
    expect((await ask<Stats>(stack, `{ website(id: "1") { id ${SETTLED} } }`)).calls).toEqual([WEBSITE_CALL('1')]);
    clock.advance(1); // 86400 s: the settled one expired (the website was read 1 s ago)
    expect((await ask<Stats>(stack, `{ website(id: "1") { id ${SETTLED} } }`)).calls).toEqual([SETTLED_CALL]);
  });

  it.each([
    ['UTC', true],
    ['America/New_York', false],
  ] as const)('UPSTREAM_TIMEZONE=%s: a range ending 2026-03-14, read at 2026-03-15T00:30Z, is settled: %s', async (timeZone, settled) => {
    const { stack, clock } = await cachedStack(
      { UPSTREAM_TIMEZONE: timeZone, KEY_RECHECK_S: '86400' },
      { clock: new Clock(Date.parse('2026-03-15T00:30:00Z')) },
    );
    const query = `{ stats(websiteId: "1", name: COUNTRY, from: "2026-02-14", to: "2026-03-14") { totalCount } }`;
    expect((await ask<{ stats: TotalCount }>(stack, query)).cache).toEqual({ hits: 0, misses: 2, stale: 0 });
    clock.advance(61); // the website (recent) expired; the statistic only if it is recent
    const later = await ask<{ stats: TotalCount }>(stack, query);
    expect(later.calls).toEqual(settled ? [WEBSITE_CALL('1')] : [WEBSITE_CALL('1'), SETTLED_CALL]);
    expect(later.cache).toEqual(settled ? { hits: 1, misses: 1, stale: 0 } : { hits: 0, misses: 2, stale: 0 });
  });
});

describe('writes drop what they touched, at once', () => {
  const READ = '{ website(id: "2") { id emailReports } websites { totalCount } }';
  type Read = WebsiteResult<{ id: string; emailReports: boolean }> & { websites: TotalCount };

  /** READ twice: the second answered from the cache. */
  async function warm(stack: Stack): Promise<Read> {
    const first = await ask<Read>(stack, READ);
    expect(first.cache).toEqual({ hits: 0, misses: 2, stale: 0 });
    const second = await ask<Read>(stack, READ);
    expect(second.calls).toEqual([]);
    return dataOf(second.response);
  }

  it("updateWebsite: the next read of the website and of the lists goes upstream and sees the change, as does the payload's query", async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const before = await warm(stack);
    const emailReports = !present(before.website, 'website 2').emailReports;
    const update = await ask<{ updateWebsite: { website: WebsiteData | null } }>(stack, UPDATE_WEBSITE, {
      id: '2',
      input: { emailReports },
    });
    expect(dataOf(update.response).updateWebsite.website?.emailReports).toBe(emailReports);
    expect(cacheControl(update.response)).toBe('no-store');

    const after = await ask<Read>(stack, READ);
    expect([...after.calls].sort()).toEqual([WEBSITE_CALL('2'), VALIDATION_CALL].sort());
    expect(after.cache).toEqual({ hits: 0, misses: 2, stale: 0 });
    expect(dataOf(after.response).website?.emailReports).toBe(emailReports);
    expect((await ask<Read>(stack, READ)).calls).toEqual([]); // cached again

    // A payload's query reads the lists after the write: the change is in them.
    const LIST = '{ websites { nodes { id emailReports } } }';
    type List = { websites: { nodes: { id: string; emailReports: boolean }[] } };
    const again = await ask<{ updateWebsite: { query: List } }>(
      stack,
      `mutation($id: ID!, $input: UpdateWebsiteInput!) { updateWebsite(id: $id, input: $input) { query ${LIST} } }`,
      { id: '2', input: { emailReports: !emailReports } },
    );
    expect(again.calls).toEqual(['PATCH /api/v1/websites/2', VALIDATION_CALL]);
    const listed = dataOf(again.response).updateWebsite.query.websites.nodes.find((node) => node.id === '2');
    expect(listed?.emailReports).toBe(!emailReports);
  });

  it("createWebsite: the lists go upstream, after it and in the payload's query", async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const before = (await warm(stack)).websites.totalCount;
    const create = await ask<{ createWebsite: { website: { id: string } | null } }>(stack, CREATE_WEBSITE, {
      input: { domain: 'cache-created.example' },
    });
    expect(dataOf(create.response).createWebsite.website).not.toBeNull();
    const after = await ask<Read>(stack, READ);
    expect(after.calls).toEqual([VALIDATION_CALL]); // the list; website 2 was not touched
    expect(after.cache).toEqual({ hits: 1, misses: 1, stale: 0 });
    expect(dataOf(after.response).websites.totalCount).toBe(before + 1);

    // The payload's query reads the lists after the write (and what it read is then cached).
    const again = await ask<{ createWebsite: { website: { id: string } | null; query: { websites: TotalCount } } }>(
      stack,
      'mutation($input: CreateWebsiteInput!) { createWebsite(input: $input) { website { id } query { websites { totalCount } } } }',
      { input: { domain: 'cache-created-again.example' } },
    );
    expect(again.calls).toEqual(['POST /api/v1/websites', VALIDATION_CALL]);
    expect(dataOf(again.response).createWebsite.query.websites.totalCount).toBe(before + 2);
    const last = await ask<Read>(stack, READ);
    expect(last.calls).toEqual([]);
    expect(dataOf(last.response).websites.totalCount).toBe(before + 2);
  });

  it("deleteWebsite: the website and the lists go upstream (NOT_FOUND), in the payload's query and after it", async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const create = await ask<{ createWebsite: { website: { id: string } | null } }>(stack, CREATE_WEBSITE, {
      input: { domain: 'cache-deleted.example' },
    });
    const id = present(dataOf(create.response).createWebsite.website, 'the created website').id;
    const read = `{ website(id: "${id}") { id domain } websites { totalCount } }`;
    type DeletedRead = IdDomain & { websites: TotalCount };
    expect((await ask<DeletedRead>(stack, read)).cache.misses).toBe(2);
    const warmed = await ask<DeletedRead>(stack, read);
    expect(warmed.calls).toEqual([]);
    const before = dataOf(warmed.response).websites.totalCount;

    const deletion = await ask<{ deleteWebsite: { deletedId: string | null; query: { websites: TotalCount } } }>(
      stack,
      'mutation($id: ID!) { deleteWebsite(id: $id) { deletedId query { websites { totalCount } } } }',
      { id },
    );
    expect(dataOf(deletion.response).deleteWebsite.deletedId).toBe(id);
    expect(deletion.calls).toEqual([`DELETE /api/v1/websites/${id}`, VALIDATION_CALL]);
    expect(dataOf(deletion.response).deleteWebsite.query.websites.totalCount).toBe(before - 1);

    // The website goes upstream; the list was read after the write by the payload's query.
    const after = await ask<DeletedRead>(stack, read);
    expect(after.calls).toEqual([WEBSITE_CALL(id)]);
    expect(after.response.data?.website).toBeNull();
    expect(firstError(after.response).extensions?.code).toBe('NOT_FOUND');
    expect(after.response.data?.websites.totalCount).toBe(before - 1);
  });

  it('a read in flight when the write lands neither answers later reads nor puts the old website back', async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const read = '{ website(id: "2") { id emailReports } }';
    type EmailReports = WebsiteResult<{ id: string; emailReports: boolean }>;
    const before = present(dataOf(await stack.gql<EmailReports>(read)).website, 'website 2').emailReports;
    await ask(stack, UPDATE_WEBSITE, { id: '2', input: { excludeBots: true } }); // drops the cached website 2
    // A slow read of it: the sandbox works the answer out on arrival (the website before the next
    // write) and sends it 300 ms later.
    stack.sandbox.log.reset();
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 300 }]);
    const slow = stack.gql<EmailReports>(read);
    for (let waited = 0; stack.sandbox.log.count === 0 && waited < 2_000; waited += 5)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(restCalls(stack.sandbox)).toEqual([WEBSITE_CALL('2')]);

    const update = await stack.gql<{ updateWebsite: { website: WebsiteData | null } }>(UPDATE_WEBSITE, {
      id: '2',
      input: { emailReports: !before },
    });
    expect(dataOf(update).updateWebsite.website?.emailReports).toBe(!before);
    // Asked after the write, while the slow read is still in flight: not given its answer.
    const during = await stack.gql<EmailReports>(read);
    expect(dataOf(during).website?.emailReports).toBe(!before);
    expect(dataOf(await slow).website?.emailReports).toBe(before); // asked before the write: fair
    // And the slow answer was not stored over the write.
    const after = await ask<EmailReports>(stack, read);
    expect(dataOf(after.response).website?.emailReports).toBe(!before);
  });

  it("a write by one key leaves the other key's entries alone", async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const other = '{ websites { totalCount } }';
    await ask(stack, other, {}, KEY_2);
    await warm(stack);
    await ask(stack, UPDATE_WEBSITE, { id: '2', input: { favorite: true } });
    expect((await ask(stack, other, {}, KEY_2)).calls).toEqual([]);
  });
});

describe('revocation', () => {
  it('past KEY_RECHECK_S one call re-validates the key; within it none; a 401 then refuses the cached answer and drops the entries', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '10', CACHE_TTL_RECENT_S: '600', UPSTREAM_MAX_ATTEMPTS: '1' });
    expect((await ask<IdDomain>(stack, WEBSITE('1'))).calls).toEqual([WEBSITE_CALL('1')]);
    expect((await ask<IdDomain>(stack, WEBSITE('3'), {}, KEY_2)).calls).toEqual([WEBSITE_CALL('3')]);

    clock.advance(9); // accepted 9 s ago: answered from the cache alone
    const within = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(within.calls).toEqual([]);
    expect(within.cache).toEqual({ hits: 1, misses: 0, stale: 0 });

    clock.advance(2); // 11 s: re-validated first (the upstream accepts it), then answered from the cache
    const rechecked = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(rechecked.calls).toEqual([VALIDATION_CALL]);
    expect(rechecked.cache).toEqual({ hits: 1, misses: 0, stale: 0 });
    expect(rechecked.response.extensions?.upstreamCalls).toBe(1);
    expect(dataOf(rechecked.response).website?.domain).toBe('acme-analytics.com');
    clock.advance(5);
    expect((await ask<IdDomain>(stack, WEBSITE('1'))).calls).toEqual([]); // accepted 5 s ago

    clock.advance(11); // past KEY_RECHECK_S again: this time the key was revoked
    stack.sandbox.log.reset();
    stack.sandbox.scriptFaults([{ kind: 'status', status: 401 }]);
    const revoked = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(revoked.calls).toEqual([VALIDATION_CALL]);
    expect(revoked.response.data?.website).toBeNull();
    expect(firstError(revoked.response).extensions).toMatchObject({ code: 'UNAUTHENTICATED', upstreamStatus: 401 });
    expect(cacheControl(revoked.response)).toBe('no-store');

    // The key works again (the fault is spent), but its entries are gone: a miss.
    const after = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(after.calls).toEqual([WEBSITE_CALL('1')]);
    expect(after.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    expect(dataOf(after.response).website?.domain).toBe('acme-analytics.com');

    // KEY_2's entries were not dropped (it is re-validated too, being past KEY_RECHECK_S).
    const other = await ask<IdDomain>(stack, WEBSITE('3'), {}, KEY_2);
    expect(other.calls).toEqual([VALIDATION_CALL]);
    expect(other.cache).toEqual({ hits: 1, misses: 0, stale: 0 });
  });

  it("a 401 on a cache miss drops the key's other entries too", async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600', UPSTREAM_MAX_ATTEMPTS: '1' });
    await ask(stack, WEBSITE('1'));
    stack.sandbox.scriptFaults([{ kind: 'status', status: 401 }]);
    const refused = await ask(stack, WEBSITE('2'));
    expect(firstError(refused.response).extensions?.code).toBe('UNAUTHENTICATED');
    const after = await ask(stack, WEBSITE('1'));
    expect(after.calls).toEqual([WEBSITE_CALL('1')]);
  });

  it('during an outage: within KEY_RECHECK_S the cached answer stands; past it the re-check fails and so does the answer', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '10', UPSTREAM_MAX_ATTEMPTS: '1' });
    const answer = dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(9);
    stack.sandbox.setKnobs({ faultRate: 1 }); // every call a 500 or a 503
    const within = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(within.calls).toEqual([]);
    expect(dataOf(within.response)).toEqual(answer);

    clock.advance(2); // nothing says the key is still valid: no answer from the cache
    const past = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(past.calls).toEqual([VALIDATION_CALL]);
    expect(past.response.data?.website).toBeNull();
    expect(firstError(past.response).extensions?.code).toBe('UPSTREAM_ERROR');
    expect(past.response.extensions?.stale).toBeUndefined();

    stack.sandbox.setKnobs({ faultRate: 0 }); // back: re-checked, then from the cache again
    const back = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(back.calls).toEqual([VALIDATION_CALL]);
    expect(dataOf(back.response)).toEqual(answer);
    expect(back.cache).toEqual({ hits: 1, misses: 0, stale: 0 });
  });
});

describe('revocation holds in every path', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Waits until the sandbox has received `count` calls since its log was last cleared. */
  async function untilCalls(stack: Stack, count: number): Promise<void> {
    for (let waited = 0; stack.sandbox.log.count < count; waited += 5) {
      if (waited > 2_000) throw new Error(`the sandbox got ${stack.sandbox.log.count} calls, not ${count}`);
      await sleep(5);
    }
  }
  /** A request whose client gives up (the connection is closed) when `leave` is called. */
  function leavingRequest(stack: Stack, query: string): { leave(): Promise<void> } {
    const controller = new AbortController();
    const gone = fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify({ query }),
      signal: controller.signal,
    }).then(
      (response) => response.text(),
      (error: unknown) => error,
    );
    return {
      async leave() {
        controller.abort();
        await gone;
      },
    };
  }

  it('a revoked key is refused within KEY_RECHECK_S even when the client whose request makes the re-check (or the read) leaves', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '5', CACHE_TTL_RECENT_S: '600', UPSTREAM_MAX_ATTEMPTS: '1' });
    dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    stack.sandbox.revokeKey(KEY_1);
    stack.sandbox.setKnobs({ latencyMs: 300 }); // holds each call long enough for others to join it
    // Round 1 joins the key's re-check of its cached answer; once the 401 dropped the entries, the
    // next rounds join a read of the website. Each time the request that made the call leaves.
    for (let round = 1; round <= 3; round++) {
      clock.advance(6);
      stack.sandbox.log.reset();
      const leaving = leavingRequest(stack, WEBSITE('1'));
      await untilCalls(stack, 1);
      const staying = Array.from({ length: 3 }, () => stack.gql<IdDomain>(WEBSITE('1')));
      await sleep(50);
      await leaving.leave();
      for (const answer of await Promise.all(staying)) {
        expect(answer.data?.website ?? null, `round ${round}`).toBeNull();
        expect(firstError(answer).extensions, `round ${round}`).toMatchObject({ code: 'UNAUTHENTICATED', upstreamStatus: 401 });
      }
      expect(restCalls(stack.sandbox)).toEqual(round === 1 ? [VALIDATION_CALL, VALIDATION_CALL] : [WEBSITE_CALL('1'), WEBSITE_CALL('1')]);
    }
    expect(stack.sandbox.log.entries.every((entry) => entry.status === 401 || entry.status === 0)).toBe(true);
  });

  /** Website 1 asked by a client that leaves once its call is in flight, and by one that stays: the stayer's answer. */
  async function oneLeavesOneStays(stack: Stack): Promise<GraphQLResponse<IdDomain>> {
    stack.sandbox.setKnobs({ latencyMs: 300 });
    stack.sandbox.log.reset();
    const leaving = leavingRequest(stack, WEBSITE('1'));
    await untilCalls(stack, 1);
    const staying = stack.gql<IdDomain>(WEBSITE('1'));
    await sleep(50);
    await leaving.leave();
    return staying;
  }

  it('a re-check cancelled because its client left is no verdict and no outage: who waited on it re-checks', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '5', CACHE_TTL_RECENT_S: '600' });
    const answer = dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(6);
    const stayed = await oneLeavesOneStays(stack);
    expect(dataOf(stayed)).toEqual(answer);
    expect(cacheOf(stayed)).toEqual({ hits: 1, misses: 0, stale: 0 });
    expect(restCalls(stack.sandbox)).toEqual([VALIDATION_CALL, VALIDATION_CALL]);
    // Accepted by the second re-check: the next requests within KEY_RECHECK_S need none.
    expect((await ask<IdDomain>(stack, WEBSITE('1'))).calls).toEqual([]);
  });

  it('a read cancelled because its client left is no outage: who joined it reads again, and gets no stale answer', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '86400', CACHE_TTL_RECENT_S: '60', CACHE_MAX_STALE_S: '600' });
    dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(61); // expired, still within its stale lifetime
    const stayed = await oneLeavesOneStays(stack);
    expect(dataOf(stayed).website?.domain).toBe('acme-analytics.com');
    expect(stayed.extensions?.stale).toBeUndefined();
    expect(cacheOf(stayed)).toEqual({ hits: 0, misses: 1, stale: 0 });
    expect(restCalls(stack.sandbox)).toEqual([WEBSITE_CALL('1'), WEBSITE_CALL('1')]);
  });

  it('during an outage a revoked key gets no cached answer, fresh or stale, once KEY_RECHECK_S has passed', async () => {
    const { stack, clock } = await cachedStack({
      KEY_RECHECK_S: '5',
      CACHE_TTL_RECENT_S: '60',
      CACHE_MAX_STALE_S: '600',
      UPSTREAM_MAX_ATTEMPTS: '1',
    });
    const first = dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(30);
    dataOf((await ask<IdDomain>(stack, WEBSITE('2'))).response); // the key accepted at 30 s
    stack.sandbox.revokeKey(KEY_1);
    stack.sandbox.setKnobs({ faultRate: 1 }); // and the install fails every call, before it looks at the key

    clock.advance(4); // accepted 4 s ago: within KEY_RECHECK_S, the cached answer stands
    const within = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(within.calls).toEqual([]);
    expect(dataOf(within.response)).toEqual(first);

    clock.advance(2); // 6 s: website 1 is fresh, but its re-check fails
    const fresh = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(fresh.calls).toEqual([VALIDATION_CALL]);
    expect(fresh.response.data?.website).toBeNull();
    expect(firstError(fresh.response).extensions?.code).toBe('UPSTREAM_ERROR');

    clock.advance(60); // both expired (with stale lifetime left), and their reads fail: no stale answer
    for (const id of ['1', '2']) {
      const stale = await ask<IdDomain>(stack, WEBSITE(id));
      expect(stale.calls).toEqual([WEBSITE_CALL(id)]);
      expect(stale.response.data?.website, `website ${id}`).toBeNull();
      expect(stale.response.extensions?.stale).toBeUndefined();
      expect(stale.cache.stale).toBe(0);
    }

    stack.sandbox.setKnobs({ faultRate: 0 }); // the outage ends: the key is refused
    const after = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(firstError(after.response).extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('stale when the upstream cannot answer', () => {
  const env = {
    CACHE_TTL_RECENT_S: '60',
    CACHE_MAX_STALE_S: '300',
    KEY_RECHECK_S: '86400',
    UPSTREAM_MAX_ATTEMPTS: '1',
    UPSTREAM_TIMEOUT_MS: '300',
  };

  it.each<[string, ScriptedFault, string]>([
    ['429', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, 'RATE_LIMITED'],
    ['503', { kind: 'status', status: 503 }, 'UPSTREAM_ERROR'],
    ['502', { kind: 'status', status: 502 }, 'UPSTREAM_ERROR'],
    ['500 (an HTML page)', { kind: 'html500' }, 'UPSTREAM_ERROR'],
    ['a timeout', { kind: 'hang' }, 'UPSTREAM_TIMEOUT'],
  ])(
    'on %s: an entry up to CACHE_MAX_STALE_S past its lifetime answers, flagged stale; past that the error',
    async (_name, fault, code) => {
      const { stack, clock } = await cachedStack(env);
      const answer = dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);

      clock.advance(60 + 300 - 1); // expired 299 s ago
      stack.sandbox.scriptFaults([fault]);
      const stale = await ask<IdDomain>(stack, WEBSITE('1'));
      expect(stale.calls).toEqual([WEBSITE_CALL('1')]); // it was asked, and could not answer
      expect(dataOf(stale.response)).toEqual(answer);
      expect(stale.response.extensions?.stale).toBe(true);
      expect(stale.cache).toEqual({ hits: 0, misses: 0, stale: 1 });
      expect(cacheControl(stale.response)).toBe('private, max-age=0');

      clock.advance(2); // expired 301 s ago
      stack.sandbox.scriptFaults([fault]);
      const failed = await ask<IdDomain>(stack, WEBSITE('1'));
      expect(failed.response.data?.website).toBeNull();
      expect(firstError(failed.response).extensions?.code).toBe(code);
      expect(failed.response.extensions?.stale).toBeUndefined();
      expect(failed.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
      expect(cacheControl(failed.response)).toBe('no-store');
    },
  );

  it('a fresh answer is not flagged stale, and a stale one is not kept fresh: the next read asks again', async () => {
    const { stack, clock } = await cachedStack(env);
    const first = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(first.response.extensions?.stale).toBeUndefined();
    clock.advance(61);
    stack.sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
    expect((await ask(stack, WEBSITE('1'))).cache.stale).toBe(1);
    const recovered = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(recovered.calls).toEqual([WEBSITE_CALL('1')]);
    expect(recovered.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    expect(recovered.response.extensions?.stale).toBeUndefined();
  });

  it('with the breaker open: the stale entry answers without an upstream call; past CACHE_MAX_STALE_S the error', async () => {
    const { stack, clock } = await cachedStack({ ...env, UPSTREAM_BREAKER_RESET_MS: '60000' });
    const answer = dataOf((await ask<IdDomain>(stack, WEBSITE('1'))).response);
    clock.advance(61);
    // Failing calls open the breaker (at least 10 calls, half of them failing): one 503 per
    // request until a request is refused without a call.
    let failures = 0;
    for (; failures < 20; failures++) {
      stack.sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
      const failing = await ask(stack, WEBSITE('2'));
      if (failing.calls.length === 0) break;
      expect(firstError(failing.response).extensions?.code).toBe('UPSTREAM_ERROR');
    }
    expect(failures).toBeGreaterThanOrEqual(9);
    const open = await ask(stack, WEBSITE('2'));
    expect(open.calls).toEqual([]);
    expect(firstError(open.response).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');

    const stale = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(stale.calls).toEqual([]);
    expect(dataOf(stale.response)).toEqual(answer);
    expect(stale.response.extensions).toMatchObject({ stale: true, cache: { hits: 0, misses: 0, stale: 1 } });

    clock.advance(300);
    const failed = await ask<IdDomain>(stack, WEBSITE('1'));
    expect(failed.calls).toEqual([]);
    expect(firstError(failed.response).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(failed.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
  });

  it('errors that are not outages (404) are not answered stale', async () => {
    const { stack, clock } = await cachedStack(env);
    await ask(stack, WEBSITE('1'));
    clock.advance(61);
    stack.sandbox.scriptFaults([{ kind: 'status', status: 404 }]);
    const answer = await ask(stack, WEBSITE('1'));
    expect(firstError(answer.response).extensions?.code).toBe('NOT_FOUND');
    expect(answer.cache.stale).toBe(0);
  });
});

describe("statistics of a website the key cannot read are never cached under it (the older install serves any website's)", () => {
  const RANGE = 'from: "2026-02-14", to: "2026-03-14"';
  const COUNTRY_CALL = (id: string): string =>
    `GET /api/v1/stats/${id}?from=2026-02-14&name=country&page=1&per_page=10&sort=desc&sort_by=count&to=2026-03-14`;
  const BY_ID = (id: string): string => `{ stats(websiteId: "${id}", name: COUNTRY, ${RANGE}) { totalCount } }`;
  const UNDER_WEBSITE = (id: string): string => `{ website(id: "${id}") { id stats(name: COUNTRY, ${RANGE}) { totalCount } } }`;
  /** The stats entries the gateway stored (the set calls of its MemoryCacheStore, after their background writes). */
  const storedStats = async (setSpy: { mock: { calls: unknown[][] } }): Promise<string[]> => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return setSpy.mock.calls.map((call) => String(call[0])).filter((key) => key.includes(':s:'));
  };

  it.each([
    ['stats(websiteId:)', BY_ID],
    ['Website.stats (looked ahead, with the website)', UNDER_WEBSITE],
  ])(
    "%s: KEY_2 asking for KEY_1's website is NOT_FOUND each time, in one round trip, and no statistics are stored",
    async (_name, query) => {
      const setSpy = vi.spyOn(MemoryCacheStore.prototype, 'set');
      const { stack } = await cachedStack({ KEY_RECHECK_S: '3600', METRICS_PORT: '0' }, { sandbox: { dialect: 'legacy', latencyMs: 300 } });
      // The look-ahead starts statistics with the website only for keys the install accepted lately.
      for (const key of [KEY_1, KEY_2]) dataOf(await stack.gql('{ websites { totalCount } }', {}, key));
      // The answer does not wait for the statistics once the website is refused: a request's statistics
      // call may still be on its way when the next request starts, which would join it (one call for
      // both). Each request starts once every call the gateway made before it has ended in the gateway.
      let made = stack.sandbox.log.count;
      const callsEnded = () =>
        until(
          'the upstream calls made so far to end',
          async () => (await metricOf(stack.gateway, 'gateway_upstream_request_duration_seconds_count')) >= made,
        );
      for (let attempt = 1; attempt <= 2; attempt++) {
        await callsEnded();
        const foreign = await ask(stack, query('1'), {}, KEY_2);
        made += foreign.calls.length;
        expect(firstError(foreign.response).extensions?.code).toBe('NOT_FOUND');
        expect(JSON.stringify(foreign.response.data ?? null)).not.toContain('totalCount');
        // Both read together (the install answered the statistics), every time: nothing came from the cache.
        expect([...foreign.calls].sort()).toEqual([COUNTRY_CALL('1'), WEBSITE_CALL('1')].sort());
        expect(stack.sandbox.log.maxInFlight).toBe(2);
      }
      expect(await storedStats(setSpy)).toEqual([]);

      // The owner's statistics are stored (and answer the next request) as before.
      await callsEnded();
      const own = await ask(stack, query('1'), {}, KEY_1);
      expect([...own.calls].sort()).toEqual([COUNTRY_CALL('1'), WEBSITE_CALL('1')].sort());
      expect(await storedStats(setSpy)).toHaveLength(1);
      expect((await ask(stack, query('1'), {}, KEY_1)).calls).toEqual([]);
    },
  );
});

describe('coalescing across requests', () => {
  it('N concurrent identical reads (separate requests, same key) share one upstream call; another key gets its own', async () => {
    const { stack } = await cachedStack({}, { sandbox: { latencyMs: 100 } });
    stack.sandbox.log.reset();
    const [ones, twos] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, () => stack.gql<IdDomain>(WEBSITE('1')))),
      Promise.all(Array.from({ length: 3 }, () => stack.gql<IdDomain>(WEBSITE('1'), {}, KEY_2))),
    ]);
    expect(stack.sandbox.log.count).toBe(2);
    expect(stack.sandbox.log.entries.map((entry) => entry.headers.authorization).sort()).toEqual([`Bearer ${KEY_1}`, `Bearer ${KEY_2}`]);
    for (const response of ones) expect(dataOf(response).website?.domain).toBe('acme-analytics.com');
    for (const response of twos) expect(firstError(response).extensions?.code).toBe('NOT_FOUND');
    const figures = ones.map(cacheOf);
    expect(figures.filter((f) => f.misses === 1)).toHaveLength(1);
    expect(figures.filter((f) => f.hits === 1)).toHaveLength(5);
  });

  it('a request that leaves does not fail the others that share its upstream call', async () => {
    const { stack } = await cachedStack({}, { sandbox: { latencyMs: 300 } });
    stack.sandbox.log.reset();
    const controller = new AbortController();
    const leaving = fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify({ query: WEBSITE('1') }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    for (let waited = 0; stack.sandbox.log.count === 0 && waited < 2_000; waited += 5)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const staying = stack.gql<IdDomain>(WEBSITE('1'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await leaving;
    const answer = await staying;
    expect(answer.errors).toEqual(undefined);
    expect(dataOf(answer).website?.domain).toBe('acme-analytics.com');
  });

  it('concurrent dashboards make one upstream call per distinct read', async () => {
    const { stack } = await cachedStack({}, { sandbox: { latencyMs: 100 } });
    stack.sandbox.log.reset();
    const answers = await Promise.all(Array.from({ length: 5 }, () => stack.gql<DashboardData>(DASHBOARD, DASHBOARD_VARIABLES)));
    expect(stack.sandbox.log.count).toBe(6);
    const first = dataOf(present(answers[0], 'an answer'));
    for (const answer of answers) expect(dataOf(answer)).toEqual(first);
    expect(answers.map(cacheOf).reduce((sum, f) => sum + f.misses, 0)).toBe(6);
  });
});

describe('bounded memory', () => {
  it('CACHE_MAX_BYTES: older entries are evicted and the store holds no more than the bound', async () => {
    const setSpy = vi.spyOn(MemoryCacheStore.prototype, 'set');
    const { stack } = await cachedStack({ CACHE_MAX_BYTES: '1500', KEY_RECHECK_S: '3600' });
    const ids = ['1', '2', '4', '5', '7', '8', '10'];
    const query = (id: string): string =>
      `{ website(id: "${id}") { id stats(name: PAGE, from: "2026-03-01", to: "2026-03-14") { totalCount } } }`;
    let store: MemoryCacheStore | undefined;
    for (const id of ids) {
      await ask(stack, query(id));
      const context = setSpy.mock.contexts[0];
      if (!(context instanceof MemoryCacheStore)) throw new Error('the gateway did not write to a MemoryCacheStore');
      store = context;
      expect(store.maxBytes).toBe(1500);
      expect(store.size.bytes).toBeLessThanOrEqual(1500);
    }
    const held = present(store, 'the store').size;
    expect(held.entries).toBeLessThan(2 * ids.length); // some were evicted
    expect(held.entries).toBeGreaterThan(0);
    // The last request's reads or its stored answer (cache/stored-answers.ts: in the same store) are held; the first was evicted.
    expect((await ask(stack, query('10'))).calls).toEqual([]);
    expect((await ask(stack, '{ website(id: "1") { id } }')).calls).toEqual([WEBSITE_CALL('1')]);
  });
});

describe('CACHE=off', () => {
  it('every read goes upstream, extensions.cache counts misses, answers are no-store', async () => {
    const stack = await startStack({ env: { CACHE: 'off' } });
    stacks.push(stack);
    for (let i = 0; i < 2; i++) {
      const answer = await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES);
      expect(answer.calls).toHaveLength(6);
      expect(answer.cache).toEqual({ hits: 0, misses: 6, stale: 0 });
      expect(cacheControl(answer.response)).toBe('no-store');
      expect(varyOf(answer.response)).toEqual(expect.arrayContaining(['authorization', 'origin']));
    }
  });
});

describe('HTTP caching', () => {
  /** A GET request of `query`, as browsers and urql send it. */
  async function get(stack: Stack, query: string, headers: Record<string, string> = {}): Promise<Response> {
    const url = `${stack.endpoint}?query=${encodeURIComponent(query)}`;
    return fetch(url, { headers: { accept: 'application/graphql-response+json', authorization: `Bearer ${KEY_1}`, ...headers } });
  }

  it('Cache-Control: private, max-age = the shortest remaining lifetime; no-store for mutations and errors; Vary: Authorization, Origin', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const first = await ask(stack, WEBSITE('1'));
    expect(cacheControl(first.response)).toBe('private, max-age=60');
    expect(varyOf(first.response)).toEqual(expect.arrayContaining(['authorization', 'origin']));
    clock.advance(20);
    const hit = await ask(stack, WEBSITE('1'));
    expect(hit.calls).toEqual([]);
    expect(cacheControl(hit.response)).toBe('private, max-age=40');

    const mutation = await ask(stack, UPDATE_WEBSITE, { id: '2', input: { favorite: true } });
    expect(mutation.response.status).toBe(200);
    expect(cacheControl(mutation.response)).toBe('no-store');
    expect(varyOf(mutation.response)).toEqual(expect.arrayContaining(['authorization', 'origin']));

    const error = await ask(stack, '{ website(id: "999999") { id } }');
    expect(firstError(error.response).extensions?.code).toBe('NOT_FOUND');
    expect(cacheControl(error.response)).toBe('no-store');
    expect(varyOf(error.response)).toEqual(expect.arrayContaining(['authorization', 'origin']));

    // Partly failed (one website found, one not): an error too.
    const partial = await ask(stack, '{ a: website(id: "1") { id } b: website(id: "999999") { id } }');
    expect(cacheControl(partial.response)).toBe('no-store');

    const unauthenticated = await ask(stack, WEBSITE('1'), {}, null);
    expect(cacheControl(unauthenticated.response)).toBe('no-store');

    // From an allowed origin (CORS): Origin is named once.
    const cors = await postGraphQL(
      stack.endpoint,
      { query: WEBSITE('1') },
      { authorization: `Bearer ${KEY_1}`, origin: 'http://localhost:5173' },
    );
    expect(cors.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(cacheControl(cors)).toBe('private, max-age=40');
    expect(varyOf(cors).filter((name) => name === 'origin')).toHaveLength(1);
    expect(varyOf(cors)).toContain('authorization');
  });

  it('GET queries carry an ETag of their data, and a matching If-None-Match gets a 304', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const query = '{ website(id: "2") { id domain emailReports } }';
    const first = await get(stack, query);
    expect(first.status).toBe(200);
    const etag = present(first.headers.get('etag'), 'ETag');
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers.get('cache-control')).toBe('private, max-age=60');
    expect(varyOf(first)).toEqual(expect.arrayContaining(['authorization', 'origin']));
    const body = (await first.json()) as { data?: WebsiteResult<{ emailReports: boolean }>; extensions?: Record<string, unknown> };
    expect(body.extensions?.cache).toEqual({ hits: 0, misses: 1, stale: 0 });
    const emailReports = present(body.data?.website, 'website 2').emailReports;

    clock.advance(10);
    const revalidated = await get(stack, query, { 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');
    expect(revalidated.headers.get('etag')).toBe(etag);
    expect(revalidated.headers.get('cache-control')).toBe('private, max-age=50');

    // The ETag covers the data only: the same data from the cache has the same tag.
    const again = await get(stack, query, { 'if-none-match': 'W/"something-else"' });
    expect(again.status).toBe(200);
    expect(again.headers.get('etag')).toBe(etag);
    await again.arrayBuffer();

    // Changed data (the write dropped the cached website), new tag: If-None-Match no longer matches.
    await ask(stack, UPDATE_WEBSITE, { id: '2', input: { emailReports: !emailReports } });
    const changed = await get(stack, query, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    const changedBody = (await changed.json()) as { data?: WebsiteResult<{ emailReports: boolean }> };
    expect(changedBody.data?.website?.emailReports).toBe(!emailReports);

    // A POST gets Cache-Control but no ETag.
    const post = await ask(stack, query);
    expect(post.response.headers.get('etag')).toBeNull();
  });

  it('the ETag is keyed: the same data under two keys has two tags, neither a hash of the data alone', async () => {
    const { stack } = await cachedStack({ KEY_RECHECK_S: '3600' });
    const query = '{ websites(search: "no-such-site.example") { totalCount } }';
    const read = async (key: string, headers: Record<string, string> = {}) => {
      const response = await get(stack, query, { authorization: `Bearer ${key}`, ...headers });
      const text = await response.text();
      return { status: response.status, etag: response.headers.get('etag'), data: text === '' ? null : JSON.parse(text).data };
    };
    const one = await read(KEY_1);
    const two = await read(KEY_2);
    expect(one.data).toEqual({ websites: { totalCount: 0 } });
    expect(two.data).toEqual(one.data);
    expect(one.etag).toMatch(/^W\/".+"$/);
    expect(two.etag).toMatch(/^W\/".+"$/);
    expect(two.etag).not.toBe(one.etag);
    // What anyone could work out from a guess of the data: not the tag.
    const unkeyed = `W/"${createHash('sha256').update(JSON.stringify(one.data)).digest('base64url').slice(0, 27)}"`;
    expect([one.etag, two.etag]).not.toContain(unkeyed);
    // Each key's tag is stable (a stored answer now), and validates only that key's copy.
    expect((await read(KEY_1)).etag).toBe(one.etag);
    expect(await read(KEY_1, { 'if-none-match': present(one.etag, 'ETag') })).toMatchObject({ status: 304, etag: one.etag });
    expect(await read(KEY_2, { 'if-none-match': present(one.etag, 'ETag') })).toMatchObject({ status: 200, etag: two.etag });
  });
});

describe('visible', () => {
  it('extensions.cache on every response, and the same figures on the request log line', async () => {
    const lines: Record<string, unknown>[] = [];
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '86400', UPSTREAM_MAX_ATTEMPTS: '1' }, { logLines: lines });
    const responses: GraphQLResponse<unknown>[] = [];
    responses.push((await ask(stack, WEBSITE('1'))).response); // a miss
    responses.push((await ask(stack, WEBSITE('1'))).response); // a hit
    responses.push((await ask(stack, '{ website(id: "999999") { id } }')).response); // an error
    responses.push((await ask(stack, UPDATE_WEBSITE, { id: '2', input: { favorite: true } })).response); // a mutation
    clock.advance(61);
    stack.sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
    responses.push((await ask(stack, WEBSITE('1'))).response); // stale
    responses.push((await ask(stack, `{ a: ${WEBSITE('1').slice(1, -1)} b: website(id: "2") { id } }`)).response);

    const figures = responses.map(cacheOf);
    expect(figures).toEqual([
      { hits: 0, misses: 1, stale: 0 },
      { hits: 1, misses: 0, stale: 0 },
      { hits: 0, misses: 1, stale: 0 },
      { hits: 0, misses: 0, stale: 0 },
      { hits: 0, misses: 0, stale: 1 },
      { hits: 0, misses: 2, stale: 0 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const requestLines = lines.filter((line) => line.msg === 'graphql request');
    expect(requestLines.map((line) => line.cache)).toEqual(figures);
    expect(JSON.stringify(lines)).not.toContain(KEY_1);
  });
});

// The dashboard of docs/queries.md (test/clients/documents/dashboard.graphql): a website and five statistics.
const DASHBOARD = `query Dashboard($id: ID!, $from: Date!, $to: Date!) {
  website(id: $id) {
    id domain privacy createdAt
    visitors: stats(name: VISITOR, from: $from, to: $to, sortBy: VALUE, sort: ASC, perPage: 50) { nodes { value count } }
    pages: stats(name: PAGE, from: $from, to: $to) { nodes { value count } totalCount }
    countries: stats(name: COUNTRY, from: $from, to: $to) { nodes { value count } }
    browsers: stats(name: BROWSER, from: $from, to: $to, perPage: 25) { nodes { value count } }
    referrers: stats(name: REFERRER, from: $from, to: $to) { nodes { value count } pageInfo { hasNextPage } }
  }
}`;
const DASHBOARD_VARIABLES = { id: '1', from: '2026-02-14', to: TODAY };
interface StatNodes {
  nodes: { value: string; count: number }[];
}
type DashboardData = WebsiteResult<{
  id: string;
  domain: string;
  visitors: StatNodes;
  pages: StatNodes & TotalCount;
  countries: StatNodes;
  browsers: StatNodes;
  referrers: StatNodes & { pageInfo: { hasNextPage: boolean } };
}>;

describe('the dashboard with a warm cache', () => {
  it('makes 0 upstream calls, and 0 for re-validation within KEY_RECHECK_S; one past it', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '30' });
    const cold = await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES);
    expect(cold.calls).toHaveLength(6);
    expect(cold.cache).toEqual({ hits: 0, misses: 6, stale: 0 });
    const answer = dataOf(cold.response);

    clock.advance(29);
    const warm = await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES);
    expect(warm.calls).toEqual([]);
    expect(warm.response.extensions).toMatchObject({ upstreamCalls: 0, cache: { hits: 6, misses: 0, stale: 0 } });
    expect(dataOf(warm.response)).toEqual(answer);
    expect(cacheControl(warm.response)).toBe('private, max-age=31');

    clock.advance(2); // past KEY_RECHECK_S: one call re-validates the key, the rest from the cache
    const rechecked = await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES);
    expect(rechecked.calls).toEqual([VALIDATION_CALL]);
    expect(rechecked.cache).toEqual({ hits: 6, misses: 0, stale: 0 });

    clock.advance(20);
    expect((await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES)).calls).toEqual([]);
  });

  it('concurrent requests past KEY_RECHECK_S share one re-validation call', async () => {
    const { stack, clock } = await cachedStack({ KEY_RECHECK_S: '30' }, { sandbox: { latencyMs: 100 } });
    await ask<DashboardData>(stack, DASHBOARD, DASHBOARD_VARIABLES);
    clock.advance(31);
    stack.sandbox.log.reset();
    const answers = await Promise.all(Array.from({ length: 5 }, () => stack.gql<DashboardData>(DASHBOARD, DASHBOARD_VARIABLES)));
    expect(restCalls(stack.sandbox)).toEqual([VALIDATION_CALL]);
    for (const answer of answers) expect(cacheOf(answer)).toEqual({ hits: 6, misses: 0, stale: 0 });
  });
});
