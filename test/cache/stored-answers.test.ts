// Stored answers (src/cache/stored-answers.ts) over real HTTP: the gateway and the sandbox on ephemeral
// ports, the gateway's clock pinned so that time passes without sleeping. Whether an answer was sent
// before GraphQL ran is read from the request log (`storedAnswer: true`) and the sandbox's log (no call).
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { FIXED_DASHBOARD, KEY_1, KEY_2, TODAY, UPDATE_WEBSITE, restCalls, testConfig } from '../fixture.js';
import { describe as redisDescribe, useRedis } from '../redis.js';

const NOON = Date.parse(`${TODAY}T12:00:00Z`);

/** The gateway's clock, moved by hand. */
class Clock {
  constructor(private at: number) {}
  readonly now = (): number => this.at;
  advance(seconds: number): void {
    this.at += seconds * 1000;
  }
}

interface Served {
  gateway: Gateway;
  endpoint: string;
  /** Request log lines, in order. */
  lines: Record<string, unknown>[];
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function sandboxFor(): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: 0, today: TODAY });
  closing.push(() => sandbox.close());
  return sandbox;
}

async function gatewayOn(sandbox: Sandbox, clock: Clock, env: Record<string, string> = {}): Promise<Served> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const gateway = await createGateway(testConfig(sandbox.url, { CACHE: 'on', ...env }), {
    now: clock.now,
    logger: pino({ level: 'info', base: null }, sink),
  });
  closing.push(() => gateway.close());
  return { gateway, endpoint: `${gateway.url}/graphql`, lines };
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** REST calls the sandbox saw for it. */
  calls: string[];
  /** Its request log line said it was a stored answer. */
  stored: boolean;
}

const BODY = JSON.stringify({ query: FIXED_DASHBOARD });

/** One request; `body` null: a GET of the dashboard. */
async function ask(
  served: Served,
  sandbox: Sandbox,
  options: { body?: string | null; key?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  sandbox.log.reset();
  const logged = served.lines.length;
  const body = options.body === undefined ? BODY : options.body;
  const headers = { authorization: `Bearer ${options.key ?? KEY_1}`, accept: 'application/graphql-response+json', ...options.headers };
  const response =
    body === null
      ? await fetch(`${served.endpoint}?query=${encodeURIComponent(FIXED_DASHBOARD)}`, { headers })
      : await fetch(served.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  // The log line is written as the answer goes out.
  for (let waited = 0; served.lines.length === logged && waited < 1_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
  const line = served.lines.slice(logged).find((entry) => entry.msg === 'graphql request');
  return { status: response.status, headers: response.headers, text, calls: restCalls(sandbox), stored: line?.storedAnswer === true };
}

/** Waits for what is stored after an answer (the store is written after it is sent). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

/** A gateway whose dashboard was answered once, and sent stored the second time. */
async function storedOnce(env: Record<string, string> = {}): Promise<{ sandbox: Sandbox; served: Served; clock: Clock }> {
  const sandbox = await sandboxFor();
  const clock = new Clock(NOON);
  const served = await gatewayOn(sandbox, clock, env);
  await ask(served, sandbox);
  await settle();
  expect((await ask(served, sandbox)).stored).toBe(true);
  return { sandbox, served, clock };
}

interface Extensions {
  upstreamCalls: number;
  cache: { hits: number; misses: number; stale: number };
  stale?: boolean;
}
const extensionsOf = (answer: Answer): Extensions => (JSON.parse(answer.text) as { extensions: Extensions }).extensions;
const dataText = (answer: Answer): string => JSON.stringify((JSON.parse(answer.text) as { data: unknown }).data);

describe('a repeated query, answered before GraphQL runs', () => {
  it('sends the bytes, ETag and Cache-Control a repeat through GraphQL gives, with no upstream call', async () => {
    const sandbox = await sandboxFor();
    const served = await gatewayOn(sandbox, new Clock(NOON));
    const first = await ask(served, sandbox, { body: null });
    expect(first.status).toBe(200);
    expect(first.calls).toHaveLength(6);
    expect(first.stored).toBe(false);
    await settle();

    const repeat = await ask(served, sandbox, { body: null });
    expect(repeat.stored).toBe(true);
    expect(repeat.calls).toEqual([]);
    expect(repeat.status).toBe(200);
    expect(extensionsOf(repeat)).toMatchObject({ upstreamCalls: 0, cache: { hits: 6, misses: 0, stale: 0 } });

    // The same query as another URL (an operationName of null): GraphQL runs, every read a hit.
    const url = `?query=${encodeURIComponent(FIXED_DASHBOARD)}`;
    const graphql = await fetch(`${served.endpoint}${url}&operationName=Dashboard`, {
      headers: { authorization: `Bearer ${KEY_1}`, accept: 'application/graphql-response+json' },
    });
    const graphqlText = await graphql.text();
    expect(graphqlText).toBe(repeat.text);
    expect(dataText(repeat)).toBe(dataText(first));
    for (const name of ['etag', 'cache-control', 'content-type', 'vary', 'x-content-type-options', 'content-length']) {
      expect(repeat.headers.get(name), name).toBe(graphql.headers.get(name));
    }
    expect(repeat.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(repeat.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);

    // A client that has it gets a 304 from the stored answer too.
    const etag = repeat.headers.get('etag') ?? '';
    const revalidated = await ask(served, sandbox, { body: null, headers: { 'if-none-match': etag } });
    expect(revalidated).toMatchObject({ status: 304, stored: true, calls: [], text: '' });
    expect(revalidated.headers.get('etag')).toBe(etag);
  });

  it('a POST: the same bytes as the first answer but for the figures of the reads', async () => {
    const sandbox = await sandboxFor();
    const served = await gatewayOn(sandbox, new Clock(NOON));
    const first = await ask(served, sandbox);
    await settle();
    const repeat = await ask(served, sandbox);
    expect(repeat).toMatchObject({ status: 200, stored: true, calls: [] });
    expect(repeat.headers.get('etag')).toBeNull(); // a POST has none, as through GraphQL
    const expected = JSON.parse(first.text) as { extensions: Extensions };
    expected.extensions.upstreamCalls = 0;
    expected.extensions.cache = { hits: 6, misses: 0, stale: 0 };
    expect(repeat.text).toBe(JSON.stringify(expected));
  });

  it('never across keys, origins or media types', async () => {
    const { sandbox, served } = await storedOnce();

    // KEY_2 does not own website 1: the install says so, however often KEY_1 asked.
    for (let attempt = 0; attempt < 2; attempt++) {
      const other = await ask(served, sandbox, { key: KEY_2 });
      expect(other.stored).toBe(false);
      expect(other.calls).toContain('GET /api/v1/websites/1');
      expect(JSON.parse(other.text)).toMatchObject({ data: { website: null }, errors: [{ extensions: { code: 'NOT_FOUND' } }] });
      await settle();
    }

    const origin = 'http://localhost:5173';
    const cors = await ask(served, sandbox, { headers: { origin } });
    expect(cors.stored).toBe(false);
    await settle();
    const corsAgain = await ask(served, sandbox, { headers: { origin } });
    expect(corsAgain.stored).toBe(true);
    expect(corsAgain.headers.get('access-control-allow-origin')).toBe(origin);
    expect((await ask(served, sandbox)).headers.get('access-control-allow-origin')).toBeNull();

    const plainJson = await ask(served, sandbox, { headers: { accept: 'application/json' } });
    expect(plainJson.stored).toBe(false);
    expect(plainJson.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it("each body its own: a body that differs in its last byte, larger than 64 KiB or not, never gets another's answer", async () => {
    const { sandbox, served } = await storedOnce({ MAX_BODY_BYTES: String(256 * 1024) });
    // Comments pad the document: the same query, other bytes (a large body is hashed from a buffer of its own).
    const padded = (chars: number, last: string): string => JSON.stringify({ query: `${FIXED_DASHBOARD}\n#${'x'.repeat(chars)}${last}` });
    for (const chars of [100, 80 * 1024]) {
      expect((await ask(served, sandbox, { body: padded(chars, 'a') })).stored).toBe(false);
      await settle();
      expect((await ask(served, sandbox, { body: padded(chars, 'a') })).stored).toBe(true);
      expect((await ask(served, sandbox, { body: padded(chars, 'b') })).stored).toBe(false);
      // The dashboard's own body, shorter than those before it, still finds its own answer.
      expect((await ask(served, sandbox)).stored).toBe(true);
    }
  });

  it('lives no longer than the shortest read it used', async () => {
    const sandbox = await sandboxFor();
    const clock = new Clock(NOON);
    const served = await gatewayOn(sandbox, clock, { CACHE_TTL_RECENT_S: '30', KEY_RECHECK_S: '3600' });
    await ask(served, sandbox);
    await settle();
    clock.advance(29);
    const fresh = await ask(served, sandbox);
    expect(fresh.stored).toBe(true);
    expect(fresh.headers.get('cache-control')).toBe('private, max-age=1');
    clock.advance(1);
    const expired = await ask(served, sandbox);
    expect(expired.stored).toBe(false);
    expect(expired.calls.length).toBeGreaterThan(0);
  });

  it('"today" is part of the request: a new day in UPSTREAM_TIMEZONE asks again, whatever the lifetimes', async () => {
    const sandbox = await sandboxFor();
    const clock = new Clock(Date.parse(`${TODAY}T23:59:50Z`));
    const served = await gatewayOn(sandbox, clock, { CACHE_TTL_RECENT_S: '86400', KEY_RECHECK_S: '86400' });
    await ask(served, sandbox);
    await settle();
    expect((await ask(served, sandbox)).stored).toBe(true);
    clock.advance(20); // 00:00:10 the next day (UTC)
    const nextDay = await ask(served, sandbox);
    expect(nextDay.stored).toBe(false);
    expect(nextDay.calls).toEqual([]); // its reads are still cached: only the answer is made again
  });

  it('a write with the key drops it: the next answer shows the write', async () => {
    const { sandbox, served } = await storedOnce();

    const update = await ask(served, sandbox, {
      body: JSON.stringify({ query: UPDATE_WEBSITE, variables: { id: '1', input: { privacy: 'PRIVATE' } } }),
    });
    expect(JSON.parse(update.text)).toMatchObject({ data: { updateWebsite: { userErrors: [] } } });
    const after = await ask(served, sandbox);
    expect(after.stored).toBe(false);
    expect(JSON.parse(after.text)).toMatchObject({ data: { website: { privacy: 'PRIVATE' } } });
  });

  it('a mutation is never stored: each is sent to the install', async () => {
    const sandbox = await sandboxFor();
    const served = await gatewayOn(sandbox, new Clock(NOON));
    const body = JSON.stringify({ query: UPDATE_WEBSITE, variables: { id: '1', input: { favorite: true } } });
    for (let attempt = 0; attempt < 2; attempt++) {
      const write = await ask(served, sandbox, { body });
      expect(write.stored).toBe(false);
      expect(write.calls).toContain('PATCH /api/v1/websites/1');
      await settle();
    }
  });

  it('past KEY_RECHECK_S the key is re-checked first: a revoked key gets no stored answer', async () => {
    const { sandbox, served, clock } = await storedOnce({ KEY_RECHECK_S: '10' });
    sandbox.revokeKey(KEY_1);
    clock.advance(11);
    const revoked = await ask(served, sandbox);
    expect(revoked.stored).toBe(false);
    expect(revoked.calls).toEqual(['GET /api/v1/websites?page=1&per_page=10&sort=desc&sort_by=id']);
    expect(JSON.parse(revoked.text)).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('an answer with an upstream error, or from a stale read, is never stored', async () => {
    const sandbox = await sandboxFor();
    const clock = new Clock(NOON);
    const served = await gatewayOn(sandbox, clock, { UPSTREAM_MAX_ATTEMPTS: '1', CACHE_TTL_RECENT_S: '60', KEY_RECHECK_S: '3600' });
    // KEY_1 accepted first: its dashboard's statistics start with the website (the look-ahead), as the
    // upstream failures below assume, and fewer than half the calls the circuit breaker counts fail.
    await ask(served, sandbox, { body: JSON.stringify({ query: '{ websites { totalCount } }' }) });
    sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
    const failed = await ask(served, sandbox);
    expect(JSON.parse(failed.text)).toHaveProperty('errors');
    await settle();
    const next = await ask(served, sandbox);
    expect(next.stored).toBe(false);
    expect(next.calls.length).toBeGreaterThan(0);
    expect(JSON.parse(next.text)).not.toHaveProperty('errors');
    await settle();
    expect((await ask(served, sandbox)).stored).toBe(true);

    // Its reads past their lifetime and the install failing: a stale answer, not stored.
    clock.advance(61);
    sandbox.scriptFaults(Array.from({ length: 6 }, () => ({ kind: 'status', status: 503 }) as const));
    const stale = await ask(served, sandbox);
    expect(extensionsOf(stale).stale).toBe(true);
    await settle();
    const afterStale = await ask(served, sandbox);
    expect(afterStale.stored).toBe(false);
    expect(afterStale.calls.length).toBeGreaterThan(0);
  });

  it('CACHE=off: every repeat goes through GraphQL and to the install', async () => {
    const sandbox = await sandboxFor();
    const served = await gatewayOn(sandbox, new Clock(NOON), { CACHE: 'off' });
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await ask(served, sandbox);
      expect(answer.stored).toBe(false);
      expect(answer.calls).toHaveLength(6);
      expect(JSON.parse(answer.text)).not.toHaveProperty('errors');
      await settle();
    }
  });
});

redisDescribe('stored answers in Redis', () => {
  const redis = useRedis();
  it('two gateways on one Redis: what one stored, the other sends', async () => {
    const sandbox = await sandboxFor();
    const clock = new Clock(NOON);
    // A budget of 2 s, not 100 ms: on a busy machine Redis may answer later, and what it did not take in
    // time is not stored. This test is about sharing, not about a slow store.
    const env = { REDIS_URL: redis.url, CACHE_STORE_TIMEOUT_MS: '2000' };
    const a = await gatewayOn(sandbox, clock, env);
    const b = await gatewayOn(sandbox, clock, env);
    const first = await ask(a, sandbox);
    expect(first.calls).toHaveLength(6);
    // The answer is stored after it is sent: B is asked once Redis holds it.
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      for (let waited = 0; (await admin.keys('agw:r:*')).length === 0; waited += 20) {
        if (waited > 10_000) throw new Error('no stored answer in Redis within 10 s');
        await settle();
      }
    } finally {
      admin.disconnect();
    }
    const fromB = await ask(b, sandbox);
    expect(fromB).toMatchObject({ status: 200, stored: true, calls: [] });
    expect(dataText(fromB)).toBe(dataText(first));

    // A write through B drops it for A too.
    await ask(b, sandbox, { body: JSON.stringify({ query: UPDATE_WEBSITE, variables: { id: '1', input: { favorite: true } } }) });
    const fromA = await ask(a, sandbox);
    expect(fromA.stored).toBe(false);
  });
});
