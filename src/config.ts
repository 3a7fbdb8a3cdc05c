// Environment -> validated, typed configuration. Every problem is reported at once, so an operator
// fixes a bad deployment in one go; main.ts turns a ConfigError into exit code 2. Units are converted
// here (seconds to milliseconds); a default belongs to the module whose option it is, and is read
// from there.
import { DEFAULT_TIME_ZONE, dayIn } from './analytics/calendar.js';
import { LIVE_DEFAULTS } from './live/hub.js';
import { DEFAULT_DOCUMENT_CACHE_MAX_BYTES } from './graphql/document-cache.js';
import { DEFAULT_COMPILED_CACHE_MAX_BYTES, DEFAULT_JIT_ON_RUN } from './graphql/plugins/use-compiled-execution.js';
import { DEFAULT_COST_LIMIT } from './graphql/plugins/use-cost-limit.js';
import { DOCUMENT_LIMIT_DEFAULTS } from './graphql/plugins/use-document-limits.js';
import { DEFAULT_FIELD_LIMIT } from './graphql/plugins/use-field-limit.js';
import { DEFAULT_METRICS_MAX_OPERATIONS } from './graphql/plugins/use-metrics.js';
import { PERSISTED_QUERY_DEFAULTS } from './graphql/plugins/use-persisted-queries.js';
import { DEFAULT_HEAP_GROWING_PERCENT } from './heap.js';
import { ADMISSION_DEFAULTS } from './http/admission.js';
import { DRAIN_DEFAULTS, type DrainOptions } from './http/drain.js';
import { DELIVERY_DEFAULTS } from './http/delivery.js';
import { LISTEN_DEFAULTS } from './http/listen.js';
import { METRICS_HOST_DEFAULT } from './http/metrics-listener.js';
import { RECEIVE_DEFAULTS } from './http/receive.js';
import { DEFAULT_WORKERS } from './http/workers.js';
import { CACHE_LIFETIME_DEFAULTS, type CacheLifetimes } from './upstream/cache.js';
import { CACHE_STORE_DEFAULTS } from './upstream/cache-store.js';
import { UPSTREAM_TRANSPORT_DEFAULTS, type UpstreamTransportOptions } from './upstream/client.js';
import { DEFAULT_STAT_NAMING, STAT_NAMINGS, type StatNaming } from './upstream/dialect.js';
import { REQUEST_BOUNDS_DEFAULTS } from './upstream/source.js';
import { parseRedisUrl } from './upstream/redis-connection.js';

export interface UpstreamConfig extends UpstreamTransportOptions {
  /** Origin plus optional path prefix of the analytics install, without `/api/v1`; null = sandbox. */
  url: string | null;
  /** Wire names of statistics: learnt from the install (auto) or pinned to a family (dialect.ts). */
  statNames: StatNaming;
}

export interface Config {
  host: string;
  port: number;
  production: boolean;
  upstream: UpstreamConfig;
  /** Upstream calls one GraphQL request may have in flight at once. */
  maxConcurrency: number;
  /** HTTP requests worked on at once; more wait in line (http/admission.ts). */
  maxActiveRequests: number;
  /** Requests that may wait in line; more are answered 503 at once. */
  maxQueuedRequests: number;
  /** Overall budget of one GraphQL request, retries included. */
  requestDeadlineMs: number;
  /** Time for a request's headers and body to arrive; a client slower than that gets a 408 (server.ts). */
  receiveTimeoutMs: number;
  /** How long an answer may wait on a reader who takes none of it, beyond its size's time (http/delivery.ts). */
  sendTimeoutMs: number;
  /** Bytes of answers waiting on their readers, all connections together; past it the longest waiting end. */
  sendBufferMaxBytes: number;
  /** How a signal stops the gateway: DRAIN_DELAY_MS and DRAIN_TIMEOUT_MS (http/drain.ts). */
  drain: DrainOptions;
  /** WORKERS: processes sharing the port (http/workers.ts); `auto`: one per available core. */
  workers: number | 'auto';
  graphiql: boolean;
  introspection: boolean;
  /** Most upstream calls one operation may be able to make (graphql/plugins/use-cost-limit.ts). */
  maxCost: number;
  /** Subscriptions' shared pollers (live/hub.ts): the interval aimed for, and one key's upstream calls a minute. */
  live: { intervalMs: number; callsPerMinute: number; maxLifetimeMs: number; maxStreams: number; maxStreamsPerKey: number };
  /** The execution of an operation at which graphql-jit compiles it (1: the first); 0: never, the standard executor only. */
  jitOnRun: number;
  limits: { depth: number; aliases: number; tokens: number; directives: number; fields: number; bodyBytes: number };
  /** Bytes (estimated heap) of parsed and validated documents kept for reuse, and of compiled operations. */
  documentCacheMaxBytes: number;
  compiledCacheMaxBytes: number;
  /** Origins allowed by CORS besides http://localhost:* and http://127.0.0.1:* outside production; ['*']: any. */
  corsOrigins: string[];
  /** The read cache; its lifetimes in milliseconds (the environment gives them in seconds). */
  cache: CacheLifetimes & {
    /** CACHE=off turns the read cache off. */
    enabled: boolean;
    /** Memory store bound (the Redis store is bounded by Redis). */
    maxBytes: number;
    /** Redis shared by several gateways (cache and persisted queries), or null for this process's memory. */
    redisUrl: string | null;
    /** Longest wait for the store before a read goes to the upstream. */
    storeTimeoutMs: number;
  };
  /** The install's time zone: "today", for which statistics are settled. */
  upstreamTimeZone: string;
  persistedQueries: {
    /** Automatic persisted queries kept, in documents and in bytes (per process, or in Redis for all gateways). */
    maxEntries: number;
    maxBytes: number;
    /** How long Redis keeps a registered document unused. */
    redisTtlMs: number;
    /** A client-preset manifest of trusted documents (a file path), or null. */
    documentsPath: string | null;
    /** Run only the manifest's documents. */
    trustedOnly: boolean;
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** V8 collects the old generation once it has grown this much over the last live size; 0: V8's own choice. */
  heapGrowingPercent: number;
  /** Prometheus text on its own listener (http/metrics-listener.ts), or null (METRICS_PORT unset): no metrics. */
  metrics: { port: number; host: string; maxOperations: number } | null;
  /** OpenTelemetry traces (tracing.ts), on when an OTLP endpoint or a traces exporter is set; the SDK reads the other OTEL_* itself. */
  tracing: boolean;
  /** FEDERATION=on: the schema is served as a Federation 2 subgraph (schema/federation.ts): `_service` and `_entities`. */
  federation: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * A value as a problem quotes it: the user and password of anything shaped like a URL
 * (`scheme://user:password@`) replaced by `***`, so that no refusal prints a credential.
 */
function shown(value: string): string {
  return value.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/gi, '$1***@');
}

/** Reads variables one by one, collecting problems instead of stopping at the first. */
class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  /** Whether `name` has a value (valid or not). */
  isSet(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got "${shown(value)}"`);
      return fallback;
    }
    return Number(value);
  }

  /** A duration given in whole seconds, as milliseconds; `fallback` in milliseconds, `min` and `max` in seconds. */
  seconds(name: string, fallbackMs: number, min: number, max: number): number {
    return this.int(name, fallbackMs / 1000, min, max) * 1000;
  }

  /** A duration in seconds with up to three decimals (`0.25`), as whole milliseconds; `min` and `max` in seconds. */
  decimalSeconds(name: string, fallbackMs: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallbackMs;
    if (!/^\d+(\.\d{1,3})?$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a number of seconds from ${min} to ${max} (at most 3 decimals), got "${shown(value)}"`);
      return fallbackMs;
    }
    return Math.round(Number(value) * 1000);
  }

  /** WORKERS: `auto`, or a count from 1 to 256 (the message names both). */
  workers(): number | 'auto' {
    const value = this.raw('WORKERS');
    if (value === undefined) return DEFAULT_WORKERS;
    if (value.toLowerCase() === 'auto') return 'auto';
    if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 256) return Number(value);
    this.problems.push(`WORKERS must be auto (one per core) or an integer from 1 to 256, got "${shown(value)}"`);
    return DEFAULT_WORKERS;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false, got "${shown(value)}"`);
    return fallback;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${shown(value)}"`);
    return fallback;
  }

  timeZone(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    try {
      dayIn(value, Date.now()); // throws for a zone Intl does not know; a name of UTC needs no Intl
      return value;
    } catch {
      this.problems.push(`${name} must be an IANA time zone such as UTC or Europe/Paris, got "${shown(value)}"`);
      return fallback;
    }
  }

  redisUrl(name: string): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    const parsed = parseRedisUrl(value);
    if ('problem' in parsed) {
      // The value is not echoed: a Redis URL may carry a password.
      this.problems.push(`${name} ${parsed.problem}`);
      return null;
    }
    return value;
  }

  origins(name: string): string[] {
    const entries = (this.raw(name) ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    for (const entry of entries) {
      // An origin is a scheme, a host and a port: never a user or a password.
      if (entry !== '*' && !/^https?:\/\/[^/\s@]+$/.test(entry)) {
        this.problems.push(`${name} entries must be origins such as https://app.example.com (or *), got "${shown(entry)}"`);
      }
    }
    return entries;
  }

  url(name: string): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      this.problems.push(`${name} must be an absolute http(s) URL, got "${shown(value)}"`);
      return null;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      this.problems.push(`${name} must use http or https, got "${parsed.protocol}"`);
      return null;
    }
    if (parsed.search || parsed.hash || parsed.username || parsed.password) {
      this.problems.push(`${name} must not carry credentials, a query or a fragment`);
      return null;
    }
    // Accept the install's base URL with or without a trailing /api/v1: both are common in docs.
    const prefix = parsed.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    return `${parsed.origin}${prefix}`;
  }
}

function readMetrics(read: EnvReader): Config['metrics'] {
  const port = read.int('METRICS_PORT', -1, 0, 65535);
  const host = read.string('METRICS_HOST', METRICS_HOST_DEFAULT);
  const maxOperations = read.int('METRICS_MAX_OPERATIONS', DEFAULT_METRICS_MAX_OPERATIONS, 0, 100_000);
  return port === -1 ? null : { port, host, maxOperations };
}

function tracingWanted(read: EnvReader): boolean {
  const exporter = read.string('OTEL_TRACES_EXPORTER', '');
  if (read.string('OTEL_SDK_DISABLED', 'false') === 'true' || exporter === 'none') return false;
  const endpoint = read.string('OTEL_EXPORTER_OTLP_ENDPOINT', '') || read.string('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '');
  return exporter !== '' || endpoint !== '';
}

/**
 * SANDBOX: whether the bundled demo sandbox may stand in for a missing UPSTREAM_URL. `auto` (unset): outside
 * production only; a production gateway with no UPSTREAM_URL (forgotten, misspelt) refuses to start rather
 * than serve writable demo data with published keys. `on`: even in production; `off`: never.
 */
function readSandbox(read: EnvReader, config: Config): void {
  const sandbox = read.oneOf('SANDBOX', ['auto', 'on', 'off'], 'auto');
  if (read.isSet('UPSTREAM_URL')) {
    if (sandbox === 'on') read.problems.push('SANDBOX=on serves the bundled demo sandbox instead of UPSTREAM_URL: set only one of them');
    return;
  }
  if (sandbox === 'on' || (sandbox === 'auto' && !config.production)) return;
  read.problems.push(
    config.production
      ? "UPSTREAM_URL is not set: set it to the analytics install's URL (NODE_ENV=production serves the demo sandbox only with SANDBOX=on)"
      : "UPSTREAM_URL is not set and SANDBOX=off: set UPSTREAM_URL to the analytics install's URL",
  );
}

export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  const transport = UPSTREAM_TRANSPORT_DEFAULTS;
  const production = read.string('NODE_ENV', 'development') === 'production';
  const config: Config = {
    host: read.string('HOST', LISTEN_DEFAULTS.host),
    port: read.int('PORT', LISTEN_DEFAULTS.port, 0, 65535),
    production,
    upstream: {
      url: read.url('UPSTREAM_URL'),
      connectTimeoutMs: read.int('UPSTREAM_CONNECT_TIMEOUT_MS', transport.connectTimeoutMs, 1, 600_000),
      timeoutMs: read.int('UPSTREAM_TIMEOUT_MS', transport.timeoutMs, 1, 600_000),
      connections: read.int('UPSTREAM_CONNECTIONS', transport.connections, 1, 4096),
      maxAttempts: read.int('UPSTREAM_MAX_ATTEMPTS', transport.maxAttempts, 1, 10),
      maxResponseBytes: read.int('UPSTREAM_MAX_RESPONSE_BYTES', transport.maxResponseBytes, 1024, 1024 ** 3),
      breakerResetMs: read.int('UPSTREAM_BREAKER_RESET_MS', transport.breakerResetMs, 100, 600_000),
      statNames: read.oneOf('UPSTREAM_STAT_NAMES', STAT_NAMINGS, DEFAULT_STAT_NAMING),
    },
    maxConcurrency: read.int('MAX_CONCURRENCY', REQUEST_BOUNDS_DEFAULTS.maxConcurrency, 1, 256),
    maxActiveRequests: read.int('MAX_ACTIVE_REQUESTS', ADMISSION_DEFAULTS.maxActive, 1, 10_000),
    maxQueuedRequests: read.int('MAX_QUEUED_REQUESTS', ADMISSION_DEFAULTS.maxQueued, 0, 1_000_000),
    requestDeadlineMs: read.int('REQUEST_DEADLINE_MS', REQUEST_BOUNDS_DEFAULTS.requestDeadlineMs, 1, 600_000),
    receiveTimeoutMs: read.int('REQUEST_RECEIVE_TIMEOUT_MS', RECEIVE_DEFAULTS.timeoutMs, 100, 600_000),
    sendTimeoutMs: read.int('SEND_TIMEOUT_MS', DELIVERY_DEFAULTS.sendTimeoutMs, 100, 600_000),
    sendBufferMaxBytes: read.int('SEND_BUFFER_MAX_BYTES', DELIVERY_DEFAULTS.bufferMaxBytes, 1024 ** 2, 1024 ** 4),
    drain: {
      delayMs: read.int('DRAIN_DELAY_MS', DRAIN_DEFAULTS.delayMs, 0, 600_000),
      timeoutMs: read.int('DRAIN_TIMEOUT_MS', DRAIN_DEFAULTS.timeoutMs, 0, 3_600_000),
    },
    workers: read.workers(),
    graphiql: read.bool('GRAPHIQL', !production),
    introspection: read.bool('INTROSPECTION', !production),
    maxCost: read.int('MAX_COST', DEFAULT_COST_LIMIT, 1, 100_000),
    live: {
      intervalMs: read.decimalSeconds('LIVE_INTERVAL_S', LIVE_DEFAULTS.intervalMs, 0.1, 86_400),
      callsPerMinute: read.int('LIVE_CALLS_PER_MIN', LIVE_DEFAULTS.callsPerMinute, 1, 100_000),
      maxLifetimeMs: read.seconds('LIVE_MAX_LIFETIME_S', LIVE_DEFAULTS.maxLifetimeMs, 1, 604_800),
      maxStreams: read.int('LIVE_MAX_STREAMS', LIVE_DEFAULTS.maxStreams, 1, 1_000_000),
      maxStreamsPerKey: read.int('LIVE_MAX_STREAMS_PER_KEY', LIVE_DEFAULTS.maxStreamsPerKey, 1, 1_000_000),
    },
    jitOnRun: read.int('GRAPHQL_JIT_ON_RUN', DEFAULT_JIT_ON_RUN, 0, 1_000_000),
    limits: {
      depth: read.int('MAX_DEPTH', DOCUMENT_LIMIT_DEFAULTS.depth, 2, 100),
      aliases: read.int('MAX_ALIASES', DOCUMENT_LIMIT_DEFAULTS.aliases, 1, 1_000),
      tokens: read.int('MAX_TOKENS', DOCUMENT_LIMIT_DEFAULTS.tokens, 100, 100_000),
      directives: read.int('MAX_DIRECTIVES', DOCUMENT_LIMIT_DEFAULTS.directives, 1, 1_000),
      fields: read.int('MAX_FIELDS', DEFAULT_FIELD_LIMIT, 1, 1_000_000),
      bodyBytes: read.int('MAX_BODY_BYTES', RECEIVE_DEFAULTS.bodyMaxBytes, 1024, 16 * 1024 * 1024),
    },
    documentCacheMaxBytes: read.int('DOCUMENT_CACHE_MAX_BYTES', DEFAULT_DOCUMENT_CACHE_MAX_BYTES, 0, 16 * 1024 ** 3),
    compiledCacheMaxBytes: read.int('COMPILED_CACHE_MAX_BYTES', DEFAULT_COMPILED_CACHE_MAX_BYTES, 0, 16 * 1024 ** 3),
    corsOrigins: read.origins('CORS_ORIGINS'),
    cache: {
      enabled: read.oneOf('CACHE', ['on', 'off'], 'on') === 'on',
      settledMs: read.seconds('CACHE_TTL_SETTLED_S', CACHE_LIFETIME_DEFAULTS.settledMs, 0, 31_536_000),
      recentMs: read.seconds('CACHE_TTL_RECENT_S', CACHE_LIFETIME_DEFAULTS.recentMs, 0, 86_400),
      maxStaleMs: read.seconds('CACHE_MAX_STALE_S', CACHE_LIFETIME_DEFAULTS.maxStaleMs, 0, 604_800),
      keyRecheckMs: read.seconds('KEY_RECHECK_S', CACHE_LIFETIME_DEFAULTS.keyRecheckMs, 1, 86_400),
      maxBytes: read.int('CACHE_MAX_BYTES', CACHE_STORE_DEFAULTS.maxBytes, 0, 16 * 1024 ** 3),
      redisUrl: read.redisUrl('REDIS_URL'),
      storeTimeoutMs: read.int('CACHE_STORE_TIMEOUT_MS', CACHE_STORE_DEFAULTS.timeoutMs, 1, 60_000),
    },
    upstreamTimeZone: read.timeZone('UPSTREAM_TIMEZONE', DEFAULT_TIME_ZONE),
    persistedQueries: {
      maxEntries: read.int('APQ_MAX_ENTRIES', PERSISTED_QUERY_DEFAULTS.maxEntries, 0, 1_000_000),
      maxBytes: read.int('APQ_MAX_BYTES', PERSISTED_QUERY_DEFAULTS.maxBytes, 0, 1024 ** 3),
      redisTtlMs: read.seconds('APQ_REDIS_TTL_S', CACHE_STORE_DEFAULTS.documentLifetimeMs, 60, 604_800),
      documentsPath: read.string('PERSISTED_DOCUMENTS', '') || null,
      trustedOnly: read.bool('TRUSTED_DOCUMENTS_ONLY', false),
    },
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    heapGrowingPercent: read.int('HEAP_GROWING_PERCENT', DEFAULT_HEAP_GROWING_PERCENT, 0, 1_000),
    metrics: readMetrics(read),
    tracing: tracingWanted(read),
    federation: read.oneOf('FEDERATION', ['on', 'off'], 'off') === 'on',
  };
  readSandbox(read, config);
  if (config.persistedQueries.trustedOnly && config.persistedQueries.documentsPath === null) {
    read.problems.push('TRUSTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS, the manifest of the documents to run');
  }
  if (config.persistedQueries.trustedOnly && config.federation) {
    read.problems.push(
      'TRUSTED_DOCUMENTS_ONLY would refuse every document a federation router writes (FEDERATION=on): keep trusted documents at the router',
    );
  }
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}
