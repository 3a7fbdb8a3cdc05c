// The baselines' client: what a browser page does without the gateway, with undici straight to the
// REST API. Also the harness's own access to the sandbox's control paths.
import { Pool } from 'undici';

export interface RestCall {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below /api/v1, e.g. /websites/1. */
  path: string;
  query?: Record<string, string>;
  /** Sent form-encoded. */
  form?: Record<string, string>;
}

export class RestError extends Error {
  constructor(
    readonly status: number,
    call: RestCall,
  ) {
    super(`${call.method} ${call.path} answered ${status}`);
  }
}

export class RestClient {
  private readonly pool: Pool;
  private readonly authorization: string;

  constructor(origin: string, key: string, connections: number) {
    this.pool = new Pool(origin, { connections, keepAliveTimeout: 30_000 });
    this.authorization = `Bearer ${key}`;
  }

  /** Sends the call and returns its parsed JSON body; a non-2xx answer is a RestError. */
  async call(call: RestCall): Promise<unknown> {
    const search = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    const headers: Record<string, string> = { accept: 'application/json', authorization: this.authorization };
    if (call.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const { statusCode, body } = await this.pool.request({
      method: call.method,
      path: `/api/v1${call.path}${search}`,
      headers,
      body: call.form ? new URLSearchParams(call.form).toString() : null,
    });
    if (statusCode < 200 || statusCode > 299) {
      await body.dump();
      throw new RestError(statusCode, call);
    }
    return body.json();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Entries of the sandbox's request log, as the harness reads them. */
export interface LogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-case names. */
  headers?: Record<string, string>;
  body: string;
  /** The status answered (0 while in flight, or when the socket went away). */
  status?: number;
  /** The sandbox's performance.now() at arrival, and when its answer ended (null while in flight). */
  startedAt?: number;
  endedAt?: number | null;
}

/** "METHOD /path?sorted=query" of a call: a read tried again has the same. */
export function callSignature(entry: LogEntry): string {
  const query = Object.entries(entry.query)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  return `${entry.method} ${entry.path}${query ? `?${query}` : ''}`;
}

/** Not an attempt a gateway retries: answered, and not with a 502/503/504 (what it retries a read on). */
export const isAnswered = (entry: LogEntry): boolean => entry.status !== 0 && !RETRIED_STATUS.has(entry.status ?? 200);
const RETRIED_STATUS = new Set([502, 503, 504]);

/** The sandbox's control surface (/__sandbox/*), outside the API. */
export class SandboxControl {
  private readonly pool: Pool;

  /**
   * `quietMs`: the quiet spell `settle` waits for by default (300 ms; the smoke tests' short runs take
   * 50: a gateway's next call of one request follows its last within a few ms).
   */
  constructor(
    readonly url: string,
    readonly quietMs = 300,
  ) {
    this.pool = new Pool(url, { connections: 2 });
  }

  private async send(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, json?: unknown): Promise<string> {
    const { statusCode, body } = await this.pool.request({
      method,
      path,
      headers: json === undefined ? {} : { 'content-type': 'application/json' },
      body: json === undefined ? null : JSON.stringify(json),
    });
    const text = await body.text();
    if (statusCode < 200 || statusCode > 299) throw new Error(`sandbox ${method} ${path} answered ${statusCode}: ${text}`);
    return text;
  }

  async today(): Promise<string> {
    const health = JSON.parse(await this.send('GET', '/__sandbox/health')) as { today?: unknown };
    if (typeof health.today !== 'string') throw new Error('the sandbox health answer has no "today"');
    return health.today;
  }

  async setLatency(latencyMs: number): Promise<void> {
    await this.send('PUT', '/__sandbox/knobs', { latencyMs, jitterMs: 0, faultRate: 0, rateLimit: null });
  }

  /**
   * The latency, and a per-key limit of `perMinute` requests a minute (what SANDBOX_RATE_LIMIT sets):
   * each call starts fresh windows. `setLatency` turns the limit off again.
   */
  async setRateLimit(latencyMs: number, perMinute: number): Promise<void> {
    await this.send('PUT', '/__sandbox/knobs', { latencyMs, jitterMs: 0, faultRate: 0, rateLimit: { limit: perMinute, windowMs: 60_000 } });
  }

  /**
   * Adds visits to a website's today (POST /__sandbox/traffic): its VISITOR, PAGEVIEW and PAGE statistics of
   * today grow. Resolves to when they counted, on the sandbox's clock (that of the log's startedAt).
   */
  async traffic(websiteId: number, visitors: number): Promise<number> {
    const { statusCode, headers, body } = await this.pool.request({
      method: 'POST',
      path: '/__sandbox/traffic',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ websiteId, visitors }),
    });
    const text = await body.text();
    if (statusCode !== 204) throw new Error(`sandbox POST /__sandbox/traffic answered ${statusCode}: ${text}`);
    return Number(headers['x-sandbox-added-at']);
  }

  async resetLog(): Promise<void> {
    await this.send('DELETE', '/__sandbox/log');
  }

  /**
   * /api/v1 requests received since the last reset. The sandbox has no count-only view, so this
   * reads the start of the log's JSON (`{"count":N,…`) and drops the rest (the entries) unparsed.
   */
  async count(): Promise<{ count: number; inFlight: number }> {
    const { statusCode, body } = await this.pool.request({ method: 'GET', path: '/__sandbox/log' });
    if (statusCode !== 200) {
      await body.dump();
      throw new Error(`sandbox GET /__sandbox/log answered ${statusCode}`);
    }
    let head = '';
    for await (const chunk of body) {
      head += (chunk as Buffer).toString('utf8');
      const count = /"count":(\d+)/.exec(head);
      const inFlight = /"inFlight":(\d+)/.exec(head);
      if (count?.[1] && inFlight?.[1]) {
        body.destroy();
        return { count: Number(count[1]), inFlight: Number(inFlight[1]) };
      }
      if (head.length > 4096) break;
    }
    body.destroy();
    throw new Error('the sandbox log answer has no "count"/"inFlight"');
  }

  /** The whole log (for the one-request checks, when it is short). */
  async entries(): Promise<LogEntry[]> {
    const log = JSON.parse(await this.send('GET', '/__sandbox/log')) as { entries?: LogEntry[] };
    return log.entries ?? [];
  }

  /**
   * The calls in the log that were answered (for the one-request checks): an attempt whose socket went away
   * (status 0) or that got a 502/503/504 is one the gateway tries again (a read), and is not a call more.
   */
  async answered(): Promise<LogEntry[]> {
    return (await this.entries()).filter(isAnswered);
  }

  /**
   * The distinct reads with a key among them (for the one-request checks, which read each URL once): a
   * read the gateway tried again after the sandbox had answered it (its socket broke, on a busy machine)
   * is one, and the probe a gateway sends without a key as it starts (late, on a busy machine) is none.
   */
  async reads(): Promise<number> {
    const withKey = (await this.answered()).filter((entry) => entry.headers?.authorization !== undefined);
    return new Set(withKey.map(callSignature)).size;
  }

  /**
   * Waits until no /api/v1 request is in flight and none arrives for `quietMs` (a warm-up cut off
   * by autocannon leaves GraphQL requests queued in the gateway whose REST calls would otherwise
   * land in the next measured run), then resets the log. Gives up after `ms`.
   */
  async settle(quietMs = this.quietMs, ms = 20_000): Promise<void> {
    const until = Date.now() + ms;
    await this.resetLog();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, quietMs));
      const { count, inFlight } = await this.count();
      if ((count === 0 && inFlight === 0) || Date.now() > until) break;
      await this.resetLog();
    }
    await this.resetLog();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
