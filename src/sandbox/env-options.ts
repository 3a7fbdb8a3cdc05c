// The SANDBOX_* environment variables of `npm run sandbox`, read and checked.
import { parseYmd } from './calendar.js';
import { MAX_TENANT_KEYS } from './demo-data.js';
import { DIALECTS, isDialect } from './dialect.js';
import type { SandboxOptions } from './types.js';

export class ConfigError extends Error {}

/** Reads the SANDBOX_* variables; an empty variable counts as unset. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): SandboxOptions {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const number = (name: string, check: (n: number) => boolean, expected: string): number | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!/^[0-9.]+$/.test(raw) || !check(value)) throw new ConfigError(`${name} must be ${expected}, got ${JSON.stringify(raw)}`);
    return value;
  };
  const options: SandboxOptions = {
    port: number('SANDBOX_PORT', (n) => Number.isInteger(n) && n <= 65_535, 'a port number 0..65535 (0 = any free port)') ?? 4010,
    host: read('SANDBOX_HOST') ?? '127.0.0.1',
  };
  const today = read('SANDBOX_TODAY');
  if (today !== undefined) {
    if (parseYmd(today) === null) throw new ConfigError(`SANDBOX_TODAY must be a real date as YYYY-MM-DD, got ${JSON.stringify(today)}`);
    options.today = today;
  }
  const seed = number('SANDBOX_SEED', Number.isSafeInteger, 'a non-negative integer');
  if (seed !== undefined) options.seed = seed;
  const latency = number('SANDBOX_LATENCY_MS', Number.isFinite, 'a number of milliseconds >= 0');
  if (latency !== undefined) options.latencyMs = latency;
  const jitter = number('SANDBOX_JITTER_MS', Number.isFinite, 'a number of milliseconds >= 0');
  if (jitter !== undefined) options.jitterMs = jitter;
  const faultRate = number('SANDBOX_FAULT_RATE', (n) => n <= 1, 'a share between 0 and 1');
  if (faultRate !== undefined) options.faultRate = faultRate;
  const perMinute = number('SANDBOX_RATE_LIMIT', Number.isSafeInteger, 'a whole number of requests per minute (0 = off)');
  if (perMinute !== undefined) options.rateLimit = perMinute === 0 ? null : { limit: perMinute, windowMs: 60_000 };
  const dialect = read('SANDBOX_DIALECT');
  if (dialect !== undefined) {
    if (!isDialect(dialect)) throw new ConfigError(`SANDBOX_DIALECT must be ${DIALECTS.join(' or ')}, got ${JSON.stringify(dialect)}`);
    options.dialect = dialect;
  }
  const tenantKeys = number(
    'SANDBOX_TENANT_KEYS',
    (n) => Number.isInteger(n) && n <= MAX_TENANT_KEYS,
    `a whole number from 0 to ${MAX_TENANT_KEYS}`,
  );
  if (tenantKeys !== undefined) options.tenantKeys = tenantKeys;
  return options;
}
