// The read cache's passes that need more than one gateway or a rate-limited sandbox:
// - session: a few users on one key switching a dashboard between ranges, against a sandbox that
//   throttles the key (SANDBOX_RATE_LIMIT), once with CACHE=off and once with CACHE=on;
// - shared: two gateway processes on one Redis, the second one's first dashboard read from what the
//   first one put there.
// (The `cache` pass, warm against cold through autocannon, lives in bench.ts beside the other passes.)
import type { ChildServer } from './processes.js';
import { spawnRedis } from './processes.js';
import type { SandboxControl } from './rest.js';
import { SCENARIOS, type ScenarioContext } from './scenarios.js';
import { percentiles } from './percentiles.js';

/** Starts another gateway process on the harness's sandbox, with this environment on top of the harness's. */
export type GatewayStarter = (extraEnv: Record<string, string>) => Promise<ChildServer>;

export interface CachingHarness {
  control: SandboxControl;
  startGateway: GatewayStarter;
  /** The API key every user of the passes shares. */
  key: string;
  /** The dashboard scenario's context (the last 30 days, to the sandbox's today). */
  context: ScenarioContext;
  /** The sandbox's today, and the gateway's (a range ending before the latter is settled). */
  today: string;
  gatewayToday: string;
  log(line: string): void;
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The dashboard scenario over the 30 days ending yesterday: settled, so its statistics are kept CACHE_TTL_SETTLED_S. */
export function settledContext(context: ScenarioContext, today: string): ScenarioContext {
  return { ...context, from: addDays(today, -30), to: addDays(today, -1) };
}

/** The dashboard scenario's request over another range. */
export function dashboardBody(context: ScenarioContext, from: string, to: string): string {
  const step = SCENARIOS.dashboard.steps({ ...context, from, to })[0];
  const body = step?.body({});
  if (!body) throw new Error('the dashboard scenario has no request body');
  return body;
}

/** What the harness reads from one GraphQL answer. */
interface Answer {
  ms: number;
  /** HTTP status; 0 when no answer came (transport error, timeout). */
  status: number;
  /** `data.website` is there. */
  data: boolean;
  /** extensions.code of each error (UNKNOWN when it has none). */
  errorCodes: string[];
  stale: boolean;
  upstreamCalls: number | null;
  hits: number | null;
  misses: number | null;
  staleReads: number | null;
  problem: string | null;
}

interface GraphqlAnswer {
  data?: { website?: unknown } | null;
  errors?: { message?: string; extensions?: { code?: unknown } }[];
  extensions?: { upstreamCalls?: unknown; stale?: unknown; cache?: { hits?: unknown; misses?: unknown; stale?: unknown } };
}

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

async function ask(url: string, key: string, body: string): Promise<Answer> {
  const started = performance.now();
  const answer: Answer = {
    ms: 0,
    status: 0,
    data: false,
    errorCodes: [],
    stale: false,
    upstreamCalls: null,
    hits: null,
    misses: null,
    staleReads: null,
    problem: null,
  };
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    answer.ms = performance.now() - started;
    answer.status = response.status;
    let parsed: GraphqlAnswer;
    try {
      parsed = JSON.parse(text) as GraphqlAnswer;
    } catch {
      answer.problem = `HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`;
      return answer;
    }
    answer.data = parsed.data?.website !== undefined && parsed.data.website !== null;
    answer.errorCodes = (parsed.errors ?? []).map((error) =>
      typeof error.extensions?.code === 'string' ? error.extensions.code : 'UNKNOWN',
    );
    if (parsed.errors?.length) answer.problem = `GraphQL errors: ${JSON.stringify(parsed.errors).slice(0, 300)}`;
    const extensions = parsed.extensions;
    answer.stale = extensions?.stale === true;
    answer.upstreamCalls = numberOrNull(extensions?.upstreamCalls);
    answer.hits = numberOrNull(extensions?.cache?.hits);
    answer.misses = numberOrNull(extensions?.cache?.misses);
    answer.staleReads = numberOrNull(extensions?.cache?.stale);
  } catch (error) {
    answer.ms = performance.now() - started;
    answer.problem = `no answer: ${(error as Error).message}`;
  }
  return answer;
}

const sleepUntil = (at: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));

// ---------------------------------------------------------------------------------------------------
// session

export interface SessionOptions {
  /** Sandbox latency. */
  latencyMs: number;
  /** Users on the one key. */
  users: number;
  /** How long the users keep sending (then the answers still due are awaited). */
  durationSeconds: number;
  /** Each user sends one request this often, whether or not the previous one has been answered. */
  intervalSeconds: number;
  /** Requests a minute the sandbox allows each key (SANDBOX_RATE_LIMIT; a real install's throttle:60,1). */
  rateLimit: number;
}

export const DEFAULT_SESSION: SessionOptions = { latencyMs: 20, users: 5, durationSeconds: 120, intervalSeconds: 5, rateLimit: 60 };

export interface SessionRange {
  label: string;
  from: string;
  to: string;
  /** Ends before the gateway's today: kept CACHE_TTL_SETTLED_S. */
  settled: boolean;
}

export interface SessionRun {
  cache: 'off' | 'on';
  /** Requests sent (the same in both runs). */
  requests: number;
  /** Answered with the dashboard's data and no error. */
  complete: number;
  /** Answered with at least one RATE_LIMITED error (the website or some statistics missing). */
  rateLimited: number;
  /** Of those, answers that still had the website (some statistics missing). */
  rateLimitedWithData: number;
  /** Answered with other errors only, or not answered at all. */
  otherErrors: number;
  /** Answers flagged `extensions.stale` (some reads given past their lifetime because the install refused). */
  stale: number;
  /** /api/v1 requests the sandbox received, retries included, and how many it answered 429. */
  upstreamCalls: number;
  upstream429: number;
  /** Sums of the answers' extensions.cache. */
  cacheHits: number;
  cacheMisses: number;
  p50: number;
  p90: number;
  maxMs: number;
  /** Wall time from the first request to the last answer. */
  seconds: number;
  /** Error codes other than RATE_LIMITED, with their counts. */
  otherCodes: Record<string, number>;
}

export interface SessionPassResult {
  options: SessionOptions;
  /** The first range is the dashboard each user opens; then each user cycles through all of them. */
  ranges: SessionRange[];
  runs: SessionRun[];
  notes: string[];
}

export function sessionRanges(today: string, gatewayToday: string): SessionRange[] {
  const range = (label: string, from: string, to: string): SessionRange => ({ label, from, to, settled: to < gatewayToday });
  return [
    range('the last 30 days (to today)', addDays(today, -29), today),
    range('the 30 days to yesterday', addDays(today, -30), addDays(today, -1)),
    range('the 7 days to yesterday', addDays(today, -7), addDays(today, -1)),
    range('yesterday', addDays(today, -1), addDays(today, -1)),
  ];
}

/**
 * `users` users on one key, against a sandbox throttling that key to `rateLimit` requests a minute:
 * each opens the dashboard (the last 30 days, to today), then every `intervalSeconds` asks it again
 * over the next range of four (three settled, one reaching today), for `durationSeconds`. Users start
 * `intervalSeconds / users` apart. Run once through a CACHE=off gateway and once through a CACHE=on
 * one, each a fresh process, each against fresh rate-limit windows.
 */
export async function runSessionPass(options: SessionOptions, harness: CachingHarness): Promise<SessionPassResult> {
  const { control, log } = harness;
  const ranges = sessionRanges(harness.today, harness.gatewayToday);
  const notes: string[] = [];
  if (harness.today !== harness.gatewayToday) {
    notes.push(
      `the sandbox's today (${harness.today}) is not the gateway's (${harness.gatewayToday}): a range is settled when it ends before the gateway's`,
    );
  }
  const bodies = ranges.map((range) => dashboardBody(harness.context, range.from, range.to));
  const intervalMs = options.intervalSeconds * 1000;
  log(
    `pass "session": ${options.users} users on one key, one dashboard every ${options.intervalSeconds} s each for ` +
      `${options.durationSeconds} s, sandbox limited to ${options.rateLimit} requests a minute per key, ${options.latencyMs} ms`,
  );

  const runs: SessionRun[] = [];
  // Both gateways at once, before either session: the one waiting its turn is idle.
  const gateways = await Promise.allSettled([harness.startGateway({ CACHE: 'off' }), harness.startGateway({ CACHE: 'on' })]);
  try {
    for (const [i, cache] of (['off', 'on'] as const).entries()) {
      log(`  session, CACHE=${cache}`);
      const start = gateways[i] as PromiseSettledResult<ChildServer>;
      if (start.status === 'rejected') throw start.reason;
      const gateway = start.value;
      try {
        await control.setLatency(options.latencyMs);
        await control.settle();
        // Fresh windows for each run: the two runs start alike.
        await control.setRateLimit(options.latencyMs, options.rateLimit);
        const started = performance.now() + 50;
        const end = started + options.durationSeconds * 1000;
        const pending: Promise<Answer>[] = [];
        await Promise.all(
          Array.from({ length: options.users }, async (_, user) => {
            for (let k = 0; ; k++) {
              const at = started + (user * intervalMs) / options.users + k * intervalMs;
              if (at >= end) break;
              await sleepUntil(at);
              const range = k === 0 ? 0 : (k + user) % ranges.length;
              pending.push(ask(gateway.url, harness.key, bodies[range] as string));
            }
          }),
        );
        const answers = await Promise.all(pending);
        const seconds = (performance.now() - started) / 1000;
        const entries = await control.entries();
        const { count } = await control.count();
        runs.push(summariseSession(cache, answers, seconds, count, entries.filter((entry) => entry.status === 429).length));
        if (entries.length < count)
          notes.push(`CACHE=${cache}: the sandbox log kept ${entries.length} of ${count} entries: the 429 count is of those`);
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    await Promise.all(gateways.map((start) => (start.status === 'fulfilled' ? start.value.stop() : undefined)));
    await control.setLatency(options.latencyMs); // the limit off again
  }
  return { options, ranges, runs, notes };
}

function summariseSession(
  cache: 'off' | 'on',
  answers: readonly Answer[],
  seconds: number,
  upstreamCalls: number,
  upstream429: number,
): SessionRun {
  const otherCodes: Record<string, number> = {};
  let complete = 0;
  let rateLimited = 0;
  let rateLimitedWithData = 0;
  let otherErrors = 0;
  for (const answer of answers) {
    if (answer.errorCodes.includes('RATE_LIMITED')) {
      rateLimited++;
      if (answer.data) rateLimitedWithData++;
    } else if (answer.status === 200 && answer.data && answer.errorCodes.length === 0 && answer.problem === null) {
      complete++;
    } else {
      otherErrors++;
    }
    for (const code of answer.errorCodes) if (code !== 'RATE_LIMITED') otherCodes[code] = (otherCodes[code] ?? 0) + 1;
    if (answer.status !== 200 && answer.errorCodes.length === 0) {
      const code = answer.status === 0 ? 'NO_ANSWER' : `HTTP_${answer.status}`;
      otherCodes[code] = (otherCodes[code] ?? 0) + 1;
    }
  }
  const { p50, p90 } = percentiles(answers.map((answer) => answer.ms));
  const sum = (pick: (answer: Answer) => number | null): number => answers.reduce((total, answer) => total + (pick(answer) ?? 0), 0);
  return {
    cache,
    requests: answers.length,
    complete,
    rateLimited,
    rateLimitedWithData,
    otherErrors,
    stale: answers.filter((answer) => answer.stale).length,
    upstreamCalls,
    upstream429,
    cacheHits: sum((answer) => answer.hits),
    cacheMisses: sum((answer) => answer.misses),
    p50,
    p90,
    maxMs: answers.reduce((max, answer) => Math.max(max, answer.ms), 0),
    seconds,
    otherCodes,
  };
}

// ---------------------------------------------------------------------------------------------------
// shared

export interface SharedOptions {
  latencyMs: number;
  /** The redis-server program. */
  redisServer: string;
}

export interface SharedRow {
  gateway: 'A' | 'B';
  request: string;
  /** /api/v1 requests the sandbox received for it. */
  upstreamCalls: number;
  /** What its answer said: extensions.upstreamCalls and extensions.cache. */
  reportedCalls: number | null;
  hits: number | null;
  misses: number | null;
  stale: number | null;
  ms: number;
  problem: string | null;
}

export interface SharedPassResult {
  latencyMs: number;
  /** The dashboard's range: the 30 days ending yesterday (settled). */
  from: string;
  to: string;
  /** redis-server's version as it printed it; null when it did not start. */
  redisVersion: string | null;
  rows: SharedRow[];
  notes: string[];
}

/**
 * A redis-server on a free port, two gateways (A and B) with CACHE=on and REDIS_URL on it, both
 * started before any request: A's first dashboard (settled range) reads upstream and fills Redis;
 * B's first dashboard should read nothing upstream.
 */
export async function runSharedPass(options: SharedOptions, harness: CachingHarness): Promise<SharedPassResult> {
  const { control, log } = harness;
  const context = settledContext(harness.context, harness.today);
  const result: SharedPassResult = {
    latencyMs: options.latencyMs,
    from: context.from,
    to: context.to,
    redisVersion: null,
    rows: [],
    notes: [],
  };
  if (context.to >= harness.gatewayToday) {
    result.notes.push(
      `the range ends ${context.to}, not before the gateway's today ${harness.gatewayToday}: its statistics are not settled`,
    );
  }
  const body = dashboardBody(harness.context, context.from, context.to);
  log(`pass "shared": two gateways on one Redis (${options.redisServer}), ${options.latencyMs} ms sandbox`);
  await control.setLatency(options.latencyMs);
  let redis: Awaited<ReturnType<typeof spawnRedis>>;
  try {
    redis = await spawnRedis(options.redisServer);
  } catch (error) {
    result.notes.push(`not measured: ${(error as Error).message.split('\n')[0] ?? ''}`);
    return result;
  }
  result.redisVersion = redis.version;
  const gateways: ChildServer[] = [];
  try {
    const env = { CACHE: 'on', REDIS_URL: redis.url };
    gateways.push(await harness.startGateway(env), await harness.startGateway(env));
    const [a, b] = gateways as [ChildServer, ChildServer];
    const measure = async (name: 'A' | 'B', url: string, request: string): Promise<void> => {
      await control.settle();
      const answer = await ask(url, harness.key, body);
      // The entries are written to Redis in the background: let them land before the next request.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const { count } = await control.count();
      result.rows.push({
        gateway: name,
        request,
        upstreamCalls: count,
        reportedCalls: answer.upstreamCalls,
        hits: answer.hits,
        misses: answer.misses,
        stale: answer.staleReads,
        ms: answer.ms,
        problem: answer.problem ?? (answer.status === 200 && answer.data ? null : `HTTP ${answer.status}, no website in the answer`),
      });
    };
    log('  gateway A: first dashboard');
    await measure('A', a.url, 'first dashboard');
    log('  gateway B: first dashboard');
    await measure('B', b.url, 'first dashboard');
    for (const row of result.rows) if (row.problem) result.notes.push(`gateway ${row.gateway}, ${row.request}: ${row.problem}`);
  } finally {
    for (const gateway of gateways.reverse()) await gateway.stop();
    await redis.stop();
    await control.settle();
  }
  return result;
}
