import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { parseRedisUrl } from '../src/cache/redis-connection.js';

describe('loadConfig', () => {
  it('has sensible defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      production: false,
      maxConcurrency: 8,
      graphiql: true,
      introspection: true,
    });
    expect(config.upstream).toMatchObject({ url: null, maxAttempts: 3, maxResponseBytes: 4 * 1024 * 1024 });
    expect(config).toMatchObject({ maxActiveRequests: 16, maxQueuedRequests: 1000, heapGrowingPercent: 40 });
    expect(config.jitOnRun).toBe(2);
  });

  it('reads when operations are compiled (GRAPHQL_JIT_ON_RUN), 0 for never', () => {
    expect(loadConfig({ GRAPHQL_JIT_ON_RUN: '0' }).jitOnRun).toBe(0);
    expect(loadConfig({ GRAPHQL_JIT_ON_RUN: '1' }).jitOnRun).toBe(1);
    expect(() => loadConfig({ GRAPHQL_JIT_ON_RUN: 'soon' })).toThrow(/GRAPHQL_JIT_ON_RUN must be an integer/);
    expect(() => loadConfig({ GRAPHQL_JIT_ON_RUN: '-1' })).toThrow(/GRAPHQL_JIT_ON_RUN/);
  });

  it('reads the admission limits and the heap setting, and refuses values out of range', () => {
    expect(loadConfig({ MAX_ACTIVE_REQUESTS: '64', MAX_QUEUED_REQUESTS: '0', HEAP_GROWING_PERCENT: '0' })).toMatchObject({
      maxActiveRequests: 64,
      maxQueuedRequests: 0,
      heapGrowingPercent: 0,
    });
    expect(() => loadConfig({ MAX_ACTIVE_REQUESTS: '0' })).toThrow('MAX_ACTIVE_REQUESTS must be an integer from 1 to 10000, got "0"');
    expect(() => loadConfig({ MAX_QUEUED_REQUESTS: '-1' })).toThrow(/MAX_QUEUED_REQUESTS/);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '1.5' })).toThrow(/HEAP_GROWING_PERCENT/);
  });

  it('reads the live poll interval (LIVE_INTERVAL_S) in seconds, decimals allowed, from 0.1', () => {
    expect(loadConfig({}).live.intervalMs).toBe(15_000);
    expect(loadConfig({ LIVE_INTERVAL_S: '2' }).live.intervalMs).toBe(2_000);
    expect(loadConfig({ LIVE_INTERVAL_S: '0.25' }).live.intervalMs).toBe(250);
    expect(loadConfig({ LIVE_INTERVAL_S: '0.1' }).live.intervalMs).toBe(100);
    expect(() => loadConfig({ LIVE_INTERVAL_S: '0.05' })).toThrow(
      'LIVE_INTERVAL_S must be a number of seconds from 0.1 to 86400 (at most 3 decimals), got "0.05"',
    );
    expect(() => loadConfig({ LIVE_INTERVAL_S: '0.1234' })).toThrow(/LIVE_INTERVAL_S/);
    expect(() => loadConfig({ LIVE_INTERVAL_S: '1e1' })).toThrow(/LIVE_INTERVAL_S/);
    expect(() => loadConfig({ LIVE_INTERVAL_S: '-1' })).toThrow(/LIVE_INTERVAL_S/);
  });

  it('reads the time a request has to arrive (REQUEST_RECEIVE_TIMEOUT_MS): 10 s by default, 100 ms at least', () => {
    expect(loadConfig({}).receiveTimeoutMs).toBe(10_000);
    expect(loadConfig({ REQUEST_RECEIVE_TIMEOUT_MS: '2500' }).receiveTimeoutMs).toBe(2_500);
    expect(() => loadConfig({ REQUEST_RECEIVE_TIMEOUT_MS: '50' })).toThrow(
      'REQUEST_RECEIVE_TIMEOUT_MS must be an integer from 100 to 600000, got "50"',
    );
  });

  it("reads the install's time zone: UTC by default, any IANA name (a name of UTC needs no time zone data), nothing else", () => {
    expect(loadConfig({}).upstreamTimeZone).toBe('UTC');
    expect(loadConfig({ UPSTREAM_TIMEZONE: 'Etc/UTC' }).upstreamTimeZone).toBe('Etc/UTC');
    expect(loadConfig({ UPSTREAM_TIMEZONE: 'Europe/Paris' }).upstreamTimeZone).toBe('Europe/Paris');
    expect(() => loadConfig({ UPSTREAM_TIMEZONE: 'Mars/Olympus_Mons' })).toThrow(
      'UPSTREAM_TIMEZONE must be an IANA time zone such as UTC or Europe/Paris, got "Mars/Olympus_Mons"',
    );
    expect(() => loadConfig({ UPSTREAM_TIMEZONE: 'UTC+1' })).toThrow(/UPSTREAM_TIMEZONE/);
  });

  it('reads the upstream URL with or without /api/v1 and a path prefix', () => {
    expect(loadConfig({ UPSTREAM_URL: 'https://stats.example.com' }).upstream.url).toBe('https://stats.example.com');
    expect(loadConfig({ UPSTREAM_URL: 'https://stats.example.com/api/v1/' }).upstream.url).toBe('https://stats.example.com');
    expect(loadConfig({ UPSTREAM_URL: 'https://example.com/analytics/' }).upstream.url).toBe('https://example.com/analytics');
  });

  it('turns GraphiQL and introspection off in production unless asked', () => {
    const production = { NODE_ENV: 'production', UPSTREAM_URL: 'https://stats.example.com' };
    expect(loadConfig(production)).toMatchObject({ production: true, graphiql: false, introspection: false });
    expect(loadConfig({ ...production, GRAPHIQL: 'true' }).graphiql).toBe(true);
  });

  it('embeds the demo sandbox for a missing UPSTREAM_URL outside production, or when SANDBOX=on asks for it', () => {
    expect(loadConfig({}).upstream.url).toBeNull();
    expect(loadConfig({ SANDBOX: 'auto' }).upstream.url).toBeNull();
    expect(loadConfig({ NODE_ENV: 'production', SANDBOX: 'on' }).upstream.url).toBeNull();
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      expect.objectContaining({
        problems: [
          "UPSTREAM_URL is not set: set it to the analytics install's URL (NODE_ENV=production serves the demo sandbox only with SANDBOX=on)",
        ],
      }),
    );
    expect(() => loadConfig({ SANDBOX: 'off' })).toThrow(
      "UPSTREAM_URL is not set and SANDBOX=off: set UPSTREAM_URL to the analytics install's URL",
    );
    expect(() => loadConfig({ SANDBOX: 'on', UPSTREAM_URL: 'https://stats.example.com' })).toThrow(
      'SANDBOX=on serves the bundled demo sandbox instead of UPSTREAM_URL: set only one of them',
    );
    // An UPSTREAM_URL that is set but invalid is that problem alone.
    expect(() => loadConfig({ NODE_ENV: 'production', UPSTREAM_URL: 'ftp://x' })).toThrow(
      expect.objectContaining({ problems: ['UPSTREAM_URL must use http or https, got "ftp:"'] }),
    );
    expect(() => loadConfig({ SANDBOX: 'yes' })).toThrow('SANDBOX must be one of auto, on, off, got "yes"');
  });

  it('reports every bad value at once', () => {
    try {
      loadConfig({ PORT: '70000', UPSTREAM_URL: 'ftp://x', MAX_CONCURRENCY: 'lots', GRAPHIQL: 'maybe' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        'PORT must be an integer from 0 to 65535, got "70000"',
        'UPSTREAM_URL must use http or https, got "ftp:"',
        'MAX_CONCURRENCY must be an integer from 1 to 256, got "lots"',
        'GRAPHIQL must be true or false, got "maybe"',
      ]);
    }
  });

  it('learns stat names unless UPSTREAM_STAT_NAMES pins a family', () => {
    expect(loadConfig({}).upstream.statNames).toBe('auto');
    expect(loadConfig({ UPSTREAM_STAT_NAMES: 'Legacy' }).upstream.statNames).toBe('legacy');
    expect(loadConfig({ UPSTREAM_STAT_NAMES: 'contract' }).upstream.statNames).toBe('contract');
    expect(() => loadConfig({ UPSTREAM_STAT_NAMES: 'v3' })).toThrow('UPSTREAM_STAT_NAMES must be one of auto, contract, legacy, got "v3"');
  });

  it('reads the persisted-query settings; trusted documents need a manifest', () => {
    expect(loadConfig({}).persistedQueries).toEqual({
      maxEntries: 1000,
      maxBytes: 4 * 1024 * 1024,
      redisTtlMs: 86_400_000,
      documentsPath: null,
      trustedOnly: false,
    });
    expect(
      loadConfig({ APQ_MAX_ENTRIES: '2', APQ_REDIS_TTL_S: '3600', PERSISTED_DOCUMENTS: '/x.json', TRUSTED_DOCUMENTS_ONLY: 'true' })
        .persistedQueries,
    ).toEqual({
      maxEntries: 2,
      maxBytes: 4 * 1024 * 1024,
      redisTtlMs: 3_600_000,
      documentsPath: '/x.json',
      trustedOnly: true,
    });
    expect(() => loadConfig({ TRUSTED_DOCUMENTS_ONLY: 'true' })).toThrow('TRUSTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS');
    expect(() => loadConfig({ APQ_REDIS_TTL_S: '30' })).toThrow(/APQ_REDIS_TTL_S/);
  });

  it('reads the document limits and caches (MAX_FIELDS, DOCUMENT_CACHE_MAX_BYTES, COMPILED_CACHE_MAX_BYTES)', () => {
    const defaults = loadConfig({});
    expect([defaults.limits.fields, defaults.documentCacheMaxBytes, defaults.compiledCacheMaxBytes]).toEqual([
      1000,
      16 * 1024 * 1024,
      16 * 1024 * 1024,
    ]);
    const set = loadConfig({ MAX_FIELDS: '50', DOCUMENT_CACHE_MAX_BYTES: '0', COMPILED_CACHE_MAX_BYTES: '1024' });
    expect([set.limits.fields, set.documentCacheMaxBytes, set.compiledCacheMaxBytes]).toEqual([50, 0, 1024]);
    expect(() => loadConfig({ MAX_FIELDS: '0' })).toThrow(/MAX_FIELDS/);
  });

  it('serves a federation subgraph only when FEDERATION=on', () => {
    expect(loadConfig({}).federation).toBe(false);
    expect(loadConfig({ FEDERATION: 'on' }).federation).toBe(true);
    expect(loadConfig({ FEDERATION: 'OFF' }).federation).toBe(false);
    expect(() => loadConfig({ FEDERATION: 'yes' })).toThrow('FEDERATION must be one of on, off, got "yes"');
    // A router writes its own documents for the subgraph: no manifest can hold them.
    expect(() => loadConfig({ FEDERATION: 'on', TRUSTED_DOCUMENTS_ONLY: 'true', PERSISTED_DOCUMENTS: 'documents.json' })).toThrow(
      /TRUSTED_DOCUMENTS_ONLY would refuse every document a federation router writes/,
    );
    expect(loadConfig({ FEDERATION: 'on', PERSISTED_DOCUMENTS: 'documents.json' }).federation).toBe(true);
  });

  it('refuses credentials in the upstream URL', () => {
    expect(() => loadConfig({ UPSTREAM_URL: 'https://user:pw@example.com' })).toThrow(/credentials/);
  });

  it("reads a sentinels' own credentials from a redis-sentinel:// URL's query, and refuses any other query", () => {
    expect(parseRedisUrl('redis-sentinel://:primary@10.0.0.1:26379/mymaster?sentinelUsername=watch&sentinelPassword=a%2Bb+c%40')).toEqual({
      target: {
        kind: 'sentinel',
        sentinels: [{ host: '10.0.0.1', port: 26379 }],
        name: 'mymaster',
        tls: false,
        password: 'primary',
        sentinelUsername: 'watch',
        sentinelPassword: 'a+b+c@',
      },
    });
    const refused = "redis-sentinel://'s query takes sentinelUsername and sentinelPassword (each once, URL-encoded), and nothing else";
    for (const query of ['password=hunter2', 'sentinelPassword=a&sentinelPassword=hunter2', 'sentinelPassword=%zz'])
      expect(parseRedisUrl(`redis-sentinel://10.0.0.1:26379/mymaster?${query}`)).toEqual({ problem: refused });
    expect(parseRedisUrl('redis-cluster://10.0.0.1:7000?sentinelPassword=hunter2')).toEqual({
      problem: 'redis-cluster:// takes no query (every node has the same user and password)',
    });
  });

  it('never prints a password it refuses: a URL quoted in a problem has its user and password masked', () => {
    const problems = (env: Record<string, string>, expected: string[]): void =>
      expect(() => loadConfig(env)).toThrow(expect.objectContaining({ problems: expected }));
    problems({ UPSTREAM_URL: 'https://admin:hunter2@host:99999/' }, [
      'UPSTREAM_URL must not carry credentials (a user or password; an @ in its path is written %40), got "https://***@host:99999/"',
    ]);
    // An origin never has a user or a password: refused, and not echoed.
    problems({ CORS_ORIGINS: 'https://app.example.com,https://u:hunter2@x.example.com' }, [
      'CORS_ORIGINS entries must be origins such as https://app.example.com (or *), never with a user or password, got "https://***@x.example.com"',
    ]);
    // A URL put in the wrong variable.
    problems({ PORT: 'redis://:hunter2@cache:6379', LOG_LEVEL: 'https://u:hunter2@x/' }, [
      'PORT must be an integer from 0 to 65535, got "redis://***@cache:6379"',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "https://***@x/"',
    ]);
  });
});
