// The sandbox's public interface: what the gateway, its tests and the benchmark program against.
import type { Dialect } from './dialect.js';

export type { Dialect } from './dialect.js';

export interface SandboxKnobs {
  /** Fixed delay added before each /api/v1 answer (default 0). */
  latencyMs: number;
  /** Plus a uniform random [0, jitterMs) (default 0). */
  jitterMs: number;
  /** 0..1 share of /api/v1 requests answered 500 (an HTML page) or 503 (JSON); default 0. */
  faultRate: number;
  /** Per key; null = off (default). */
  rateLimit: { limit: number; windowMs: number } | null;
}

export type ScriptedFault =
  /** e.g. 502, 503, or 429 with {'retry-after':'1'}; the body defaults to a JSON message. */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** 500 with an HTML error page. */
  | { kind: 'html500' }
  /** Never answers (until the client gives up or close()). */
  | { kind: 'hang' }
  /** Sends status + headers + part of a JSON body, then destroys the socket. */
  | { kind: 'reset' }
  /** A JSON body cut short with a correct-looking close (content-length matches what is sent). */
  | { kind: 'truncated' }
  /** 200 with a body that is not JSON. */
  | { kind: 'malformed' }
  /** 200 with a valid JSON body of about that many bytes. */
  | { kind: 'oversize'; bytes: number }
  /** Answers normally, after ms. */
  | { kind: 'delay'; ms: number }
  /**
   * Handles the request normally (auth checked, rate limit counted, a write applied to the store;
   * the random faultRate does not apply), then breaks the answer on its way out: `malformed`
   * replaces the body by one that is not JSON (status and headers kept), `truncated` cuts it short
   * with a matching content-length, `reset` sends the status and headers and destroys the socket
   * mid-body. For proving that a write whose 2xx answer could not be read was applied anyway.
   */
  | { kind: 'afterHandling'; answer: 'malformed' | 'truncated' | 'reset' }
  /**
   * An install that lies about its page count: the request is handled normally (as afterHandling),
   * then a paginated answer (the websites list, stats; either envelope) claims `lastPage` pages: its
   * `last_page`, a `total` of that many full pages and its links say so, its rows are the real ones.
   * Any other answer goes out unchanged (the fault is still used up).
   */
  | { kind: 'pageCount'; lastPage: number }
  /**
   * The third envelope in use: the request is handled normally (as afterHandling), then a paginated
   * answer goes out as its rows alone, `{"data":[...]}`, with no paging numbers or links. Any other
   * answer goes out unchanged.
   */
  | { kind: 'noPaging' }
  /**
   * An install that answers with another website's record: the request is handled normally (as
   * afterHandling), then an answer naming one website (`data.id` of a show, create or update, `id`
   * of a delete) names `id` instead. Any other answer goes out unchanged.
   */
  | { kind: 'websiteId'; id: number };

export interface SandboxOptions extends Partial<SandboxKnobs> {
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** 'YYYY-MM-DD': pins "today" for the seeded data; default: the UTC date of the clock (`now`) at start. */
  today?: string;
  /**
   * The sandbox's clock, ms since the epoch: timestamps of writes, and the time of day today's
   * figures have reached. Default: the real clock; with a pinned `today`, shifted onto that day at
   * the real time of day, and running on.
   */
  now?: () => number;
  /**
   * Whether today's figures of the seeded websites grow with the clock: at each minute of the day
   * (UTC), the part of the day's seeded traffic that has happened by then, along the site's
   * hour-of-day curve (its `visitors_hours`/`pageviews_hours`), none at midnight, the whole day's
   * once the day is over; worked out once a minute per website. Counts added by POST
   * /__sandbox/traffic come on top either way. Default: true, except with a pinned `today` and no
   * `now`, whose figures stay fixed (today's are then the whole day's, as with false).
   */
  liveToday?: boolean;
  /** Default: a fixed constant. */
  seed?: number;
  /** Most entries the request log keeps, oldest dropped first (count is unaffected); default 10000. */
  logLimit?: number;
  /**
   * Which install to play (docs/CONTRACT.md): 'contract' (default) answers as parts A and B describe;
   * 'legacy' as the older install of part C: its stat names (os, pageviews, resolution, visitors,
   * plus landing_page, pageviews_hours, visitors_hours), stats as Laravel's plain paginator,
   * websites without exclude_params and favorite, NULL privacy/email on create and posted strings
   * echoed after writes, the model-not-found 404 on update, stats of any user's website, lenient
   * reads (a 500 for what would crash them) and a 302 to /login for a client not asking for JSON.
   */
  dialect?: Dialect;
  /**
   * More API keys of user 1, `sandbox-tenant-1` to `sandbox-tenant-N`: each a tenant of its own to a
   * gateway (its own cache entries and stored answers, its own rate limit here), for benchmarks of many
   * keys. Default 0; at most MAX_TENANT_KEYS.
   */
  tenantKeys?: number;
}

export interface RequestLogEntry {
  method: string;
  /** e.g. '/api/v1/websites/3' */
  path: string;
  /** Decoded query parameters (last one wins). */
  query: Record<string, string>;
  /** Lower-cased names, as received (authorization included). */
  headers: Record<string, string>;
  /** Raw request body ('' when none). */
  body: string;
  /** Status answered (0 if the socket was destroyed / never answered). */
  status: number;
  /** performance.now() at arrival. */
  startedAt: number;
  endedAt: number | null;
}

export interface RequestLog {
  /** /api/v1 requests received. */
  readonly count: number;
  readonly entries: readonly RequestLogEntry[];
  /** Most /api/v1 requests in flight at once since the last reset. */
  readonly maxInFlight: number;
  readonly inFlight: number;
  /** Clears entries, count and maxInFlight. */
  reset(): void;
}

export interface Sandbox {
  /** e.g. 'http://127.0.0.1:43117' (no trailing slash; the API is at url + '/api/v1'). */
  url: string;
  log: RequestLog;
  /** The install it plays: SandboxOptions.dialect, or what setDialect last set. */
  readonly dialect: Dialect;
  /** ['sandbox-key-1', 'sandbox-key-2'] */
  keys: readonly string[];
  setKnobs(knobs: Partial<SandboxKnobs>): void;
  /**
   * Plays the other install from the next /api/v1 request on, with the same websites and
   * statistics: an install upgraded or rolled back while its clients run.
   */
  setDialect(dialect: Dialect): void;
  /**
   * Each of the next /api/v1 requests consumes one, in order, on arrival. Most replace the
   * handling (auth is NOT checked); `delay`, `afterHandling`, `pageCount`, `noPaging` and `websiteId`
   * handle the request normally.
   */
  scriptFaults(faults: ScriptedFault[]): void;
  /**
   * Revokes one of `keys` (every /api/v1 call with it is then a 401, as after its user deleted it),
   * or with `revoked` false accepts it again. Its websites stay.
   */
  revokeKey(key: string, revoked?: boolean): void;
  /** Closes the server and any hanging sockets. */
  close(): Promise<void>;
}
