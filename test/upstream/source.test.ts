// UpstreamSource.keyAccepted (the request cache's): whether, in this request, the install answered the
// key with a success or its `seen` mark (accepted within KEY_RECHECK_S) was found. No response shows it
// (the APQ registration reads it), so it is read on each request's source, made as the gateway makes
// it, with the real upstream client against the sandbox and a real MemoryCacheStore.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { NO_CACHE, createReadCache, type ReadCache } from '../../src/cache/read-cache.js';
import { MemoryCacheStore } from '../../src/cache/memory-store.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.js';
import { createStatNames } from '../../src/upstream/dialect.js';
import { createSource, type Upstream, type UpstreamSource } from '../../src/upstream/source.js';
import { KEY_1, KEY_2, TODAY, testConfig } from '../fixture.js';
import { hasFastProperties } from '../v8.js';

let sandbox: Sandbox;
let client: UpstreamClient;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
  const { upstream } = testConfig(sandbox.url, { UPSTREAM_MAX_ATTEMPTS: '1' });
  client = createUpstreamClient({ ...upstream, url: sandbox.url });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

/** The cache clock, moved by hand. */
let at = Date.parse(`${TODAY}T12:00:00Z`);
const KEY_RECHECK_MS = 10_000;

function cacheOnMemory(): ReadCache {
  return createReadCache({
    store: new MemoryCacheStore(1024 * 1024, () => at),
    settledMs: 86_400_000,
    recentMs: 60_000,
    maxStaleMs: 600_000,
    keyRecheckMs: KEY_RECHECK_MS,
    now: () => at,
  });
}

/** One request's upstream source, as the gateway makes it for a request with `key`. */
function requestWith(cache: ReadCache, key: string): UpstreamSource {
  const upstream: Upstream = { client, statNames: createStatNames('contract'), cache, clock: { now: () => at, timeZone: 'UTC' } };
  const usage = { upstreamCalls: 0, rateLimit: null, cache: { hits: 0, misses: 0, stale: 0, freshForS: null } };
  const signal = new AbortController().signal;
  return createSource(upstream, {
    credentials: { authorization: `Bearer ${key}` },
    signal,
    deadline: Date.now() + 10_000,
    maxConcurrency: 8,
    usage,
  });
}

/** The REST calls the sandbox received since its log was last cleared, as "METHOD path". */
const callsSinceReset = (): string[] => sandbox.log.entries.map((entry) => `${entry.method} ${entry.path}`);

describe('keyAccepted', () => {
  it('with the cache: set by an answered read, a seen mark found with a hit, a re-check that succeeded, an answered write', async () => {
    const cache = cacheOnMemory();
    const first = requestWith(cache, KEY_1);
    expect(first.keyAccepted()).toBe(false);
    await first.website('1'); // a miss, answered
    expect(first.keyAccepted()).toBe(true);

    sandbox.log.reset();
    const hit = requestWith(cache, KEY_1);
    await hit.website('1'); // from the cache: the key was seen just now
    expect(callsSinceReset()).toEqual([]);
    expect(hit.keyAccepted()).toBe(true);

    const notFound = requestWith(cache, KEY_1);
    await expect(notFound.website('3')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(notFound.keyAccepted()).toBe(false); // the install refused the read: no success

    at += KEY_RECHECK_MS + 1_000;
    sandbox.log.reset();
    const rechecked = requestWith(cache, KEY_1);
    await rechecked.website('1');
    expect(callsSinceReset()).toEqual(['GET /api/v1/websites']); // the re-check, then the cached website
    expect(rechecked.keyAccepted()).toBe(true);

    const writing = requestWith(cache, KEY_1);
    await writing.updateWebsite('2', { favorite: true });
    expect(writing.keyAccepted()).toBe(true);
  });

  it('with the cache: never for a revoked key, from the cache or not', async () => {
    const cache = cacheOnMemory();
    await requestWith(cache, KEY_2).website('3');
    at += KEY_RECHECK_MS + 1_000;
    sandbox.revokeKey(KEY_2);
    try {
      const cached = requestWith(cache, KEY_2);
      await expect(cached.website('3')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' }); // refused by the re-check
      expect(cached.keyAccepted()).toBe(false);
      const read = requestWith(cache, KEY_2);
      await expect(read.website('6')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(read.keyAccepted()).toBe(false);
    } finally {
      sandbox.revokeKey(KEY_2, false);
    }
  });

  it('CACHE=off: false until a read or a write through the request is answered with a success', async () => {
    const reading = requestWith(NO_CACHE, KEY_1);
    expect(reading.keyAccepted()).toBe(false);
    await expect(reading.website('3')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(reading.keyAccepted()).toBe(false);
    await reading.website('1');
    expect(reading.keyAccepted()).toBe(true);

    const writing = requestWith(NO_CACHE, KEY_1);
    await writing.updateWebsite('2', { favorite: false });
    expect(writing.keyAccepted()).toBe(true);

    sandbox.revokeKey(KEY_1);
    try {
      const revoked = requestWith(NO_CACHE, KEY_1);
      await expect(revoked.website('1')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(revoked.keyAccepted()).toBe(false);
    } finally {
      sandbox.revokeKey(KEY_1, false);
    }
  });
});

// Made for each request: kept in V8's fast mode (no accessor), or every young object of the request would
// live through young collections (test/v8.ts, docs/performance.md#garbage).
describe("a request's source and cache are fast objects", () => {
  it.each([
    ['with the cache', cacheOnMemory],
    ['CACHE=off', () => NO_CACHE],
  ])('%s', async (_name, cacheOf) => {
    const cache = cacheOf();
    const source = requestWith(cache, KEY_1);
    await source.website('1');
    expect(source.keyAccepted()).toBe(true);
    expect(hasFastProperties(source)).toBe(true);
    expect(hasFastProperties(cache.forRequest(`Bearer ${KEY_1}`, async () => undefined))).toBe(true);
  });
});
