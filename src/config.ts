// The gateway's settings, read once at start: each module's declarations (src/settings.ts) gathered in the
// shape the gateway is built with, and what no single module owns (NODE_ENV, LOG_LEVEL, the rules that tie
// two settings together). Every problem is reported at once, so that an operator fixes a deployment in one go.
import { z } from 'zod';
import { CALENDAR_SETTINGS } from './analytics/calendar.js';
import { CORS_SETTINGS } from './graphql/cors.js';
import { DOCUMENT_CACHE_SETTINGS } from './graphql/document-cache.js';
import { COMPILED_EXECUTION_SETTINGS } from './graphql/plugins/use-compiled-execution.js';
import { COST_LIMIT_SETTINGS } from './graphql/plugins/use-cost-limit.js';
import { DOCUMENT_LIMIT_SETTINGS } from './graphql/plugins/use-document-limits.js';
import { FIELD_LIMIT_SETTINGS } from './graphql/plugins/use-field-limit.js';
import { METRICS_SETTINGS } from './http/answer-metrics.js';
import { PERSISTED_QUERY_SETTINGS } from './graphql/plugins/use-persisted-queries.js';
import { REQUEST_TRACE_SETTINGS } from './graphql/plugins/use-request-trace.js';
import { YOGA_SETTINGS } from './graphql/endpoint-settings.js';
import { HEAP_SETTINGS } from './heap.js';
import { ADMISSION_SETTINGS } from './http/admission.js';
import { DELIVERY_SETTINGS } from './http/delivery.js';
import { DRAIN_SETTINGS } from './http/drain.js';
import { LISTEN_SETTINGS } from './http/listen.js';
import { METRICS_LISTENER_SETTINGS } from './http/metrics-listener.js';
import { RECEIVE_SETTINGS } from './http/receive.js';
import { WORKER_SETTINGS } from './http/workers.js';
import { LIVE_SETTINGS } from './live/hub.js';
import { choice, custom, type Declarations, type Setting, type SettingDoc, type SettingsOf, settingsIn, valuesOf } from './settings.js';
import { TRACING_SETTINGS, tracingWanted } from './tracing.js';
import { MCP_SETTINGS } from './mcp/tools.js';
import { CACHE_SETTINGS } from './cache/read-cache.js';
import { CACHE_STORE_SETTINGS } from './cache/store.js';
import { UPSTREAM_TRANSPORT_SETTINGS } from './upstream/client.js';
import { DIALECT_SETTINGS } from './upstream/dialect.js';
import { REDIS_SETTINGS } from './cache/redis-connection.js';
import { REQUEST_BOUNDS_SETTINGS } from './upstream/source.js';

const DECLARED = {
  ...LISTEN_SETTINGS,
  production: custom(
    'NODE_ENV',
    z.string().transform((value) => value === 'production'),
    {
      fallback: false,
      shown: 'development',
      unit: 'name',
      doc: 'production masks unexpected errors and turns GraphiQL and introspection off by default',
    },
  ),
  sandbox: choice('SANDBOX', ['auto', 'on', 'off'], {
    fallback: 'auto',
    doc: 'whether the bundled demo sandbox stands in for a missing UPSTREAM_URL: auto, outside production only',
  }),
  upstream: { ...UPSTREAM_TRANSPORT_SETTINGS, ...DIALECT_SETTINGS },
  ...REQUEST_BOUNDS_SETTINGS,
  ...ADMISSION_SETTINGS,
  receiveTimeoutMs: RECEIVE_SETTINGS.receiveTimeoutMs,
  ...DELIVERY_SETTINGS,
  drain: DRAIN_SETTINGS,
  ...WORKER_SETTINGS,
  ...YOGA_SETTINGS,
  ...REQUEST_TRACE_SETTINGS,
  ...COST_LIMIT_SETTINGS,
  live: LIVE_SETTINGS,
  ...COMPILED_EXECUTION_SETTINGS,
  limits: { ...DOCUMENT_LIMIT_SETTINGS, ...FIELD_LIMIT_SETTINGS, bodyBytes: RECEIVE_SETTINGS.bodyBytes },
  ...DOCUMENT_CACHE_SETTINGS,
  ...CORS_SETTINGS,
  cache: {
    ...CACHE_SETTINGS,
    maxBytes: CACHE_STORE_SETTINGS.maxBytes,
    ...REDIS_SETTINGS,
    storeTimeoutMs: CACHE_STORE_SETTINGS.storeTimeoutMs,
  },
  ...CALENDAR_SETTINGS,
  persistedQueries: { ...PERSISTED_QUERY_SETTINGS, redisTtlMs: CACHE_STORE_SETTINGS.redisTtlMs },
  logLevel: choice('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    fallback: 'info',
    unit: 'pino level',
    doc: 'the least level logged; silent turns request logs off',
  }),
  ...HEAP_SETTINGS,
  metrics: { ...METRICS_LISTENER_SETTINGS, ...METRICS_SETTINGS },
  tracing: TRACING_SETTINGS,
  mcp: MCP_SETTINGS,
} satisfies Declarations;

type Declared = SettingsOf<typeof DECLARED>;

export type Config = Omit<Declared, 'metrics' | 'tracing'> & {
  /** null without METRICS_PORT: no metrics. */
  metrics: { port: number; host: string; maxOperations: number } | null;
  tracing: boolean;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function declaredSettings(): SettingDoc[] {
  return settingsIn(DECLARED).map((setting) => setting.doc);
}

/** In production, no UPSTREAM_URL refuses to start rather than serve writable demo data (SANDBOX=on serves it). */
function sandboxProblem({ sandbox, production }: Config, upstreamSet: boolean, problems: string[]): void {
  if (upstreamSet) {
    if (sandbox === 'on') problems.push('SANDBOX=on serves the bundled demo sandbox instead of UPSTREAM_URL: set only one of them');
    return;
  }
  if (sandbox === 'on' || (sandbox === 'auto' && !production)) return;
  problems.push(
    production
      ? "UPSTREAM_URL is not set: set it to the analytics install's URL (NODE_ENV=production serves the demo sandbox only with SANDBOX=on)"
      : "UPSTREAM_URL is not set and SANDBOX=off: set UPSTREAM_URL to the analytics install's URL",
  );
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  // An empty value counts as unset.
  const raw = (variable: string): string | undefined => {
    const value = env[variable]?.trim();
    return value === '' ? undefined : value;
  };
  const production = raw('NODE_ENV') === 'production';
  const read = (setting: Setting<unknown>): unknown => {
    const value = raw(setting.doc.variable);
    if (value === undefined) return production && 'productionFallback' in setting ? setting.productionFallback : setting.fallback;
    const parsed = setting.schema.safeParse(value);
    if (parsed.success) return parsed.data;
    problems.push(...parsed.error.issues.map((issue) => issue.message));
    return setting.fallback;
  };
  const { metrics, tracing, ...settings } = valuesOf(DECLARED, read);
  const config: Config = {
    ...settings,
    metrics: metrics.port === null ? null : { port: metrics.port, host: metrics.host, maxOperations: metrics.maxOperations },
    tracing: tracingWanted(tracing),
  };
  // UPSTREAM_URL set counts, valid or not: an invalid one has its own problem.
  sandboxProblem(config, raw('UPSTREAM_URL') !== undefined, problems);
  const { persistedQueries } = config;
  if (persistedQueries.trustedOnly && persistedQueries.documentsPath === null) {
    problems.push('TRUSTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS, the manifest of the documents to run');
  }
  if (persistedQueries.trustedOnly && config.federation) {
    problems.push(
      'TRUSTED_DOCUMENTS_ONLY would refuse every document a federation router writes (FEDERATION=on): keep trusted documents at the router',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** With a bad environment, its problems on stderr and exit code 2. */
export function loadConfigOrExit(env?: Env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}
