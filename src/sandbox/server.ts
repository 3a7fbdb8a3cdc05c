// The HTTP side: /api/v1 requests go through the request log, scripted faults, knobs (latency,
// random 5xx) and then the API itself; /__sandbox/* is the control surface for tests and
// benchmarks in other processes; everything else is a 404.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { handleApi } from './api.js';
import type { ApiContext } from './api.js';
import { currentUtcDay, dayStartMs, formatYmd, parseYmd } from './calendar.js';
import { DEMO_USERS, MAX_TENANT_KEYS } from './demo-data.js';
import { isDialect } from './dialect.js';
import type { Dialect } from './dialect.js';
import {
  DEFAULT_KNOBS,
  isHandled,
  isMisreport,
  misreported,
  parseKnobs,
  parseScriptedFaults,
  send,
  writeBrokenAnswer,
  writeFault,
  writeHtml500,
  writeUnavailable,
} from './faults.js';
import { mixSeed, seededRandom } from './random.js';
import { RateLimiter } from './rate-limiter.js';
import { MemoryRequestLog } from './request-log.js';
import { SandboxStore } from './store.js';
import type { RequestLogEntry, Sandbox, SandboxKnobs, SandboxOptions, ScriptedFault } from './types.js';

export const DEFAULT_SEED = 20_240_501;
const MS_PER_DAY = 86_400_000;
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-cache, private' };
const HTML_HEADERS = { 'content-type': 'text/html; charset=UTF-8', 'cache-control': 'no-cache, private' };
const NOT_FOUND = JSON.stringify({ message: 'Resource not found.', status: 404 });

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError(`port must be an integer 0..65535, got ${port}`);
  const host = options.host ?? '127.0.0.1';
  const clock = options.now;
  if (clock !== undefined && typeof clock !== 'function') throw new TypeError('now must be a function answering ms since the epoch');
  const started = clock?.();
  if (started !== undefined && !Number.isFinite(started)) throw new RangeError(`now() must answer ms since the epoch, got ${started}`);
  const today =
    options.today !== undefined ? parseYmd(options.today) : started === undefined ? currentUtcDay() : Math.floor(started / MS_PER_DAY);
  if (today === null) throw new RangeError(`today must be a real date as YYYY-MM-DD, got ${JSON.stringify(options.today)}`);
  const liveToday = options.liveToday ?? (clock !== undefined || options.today === undefined);
  if (typeof liveToday !== 'boolean') throw new TypeError(`liveToday must be a boolean, got ${JSON.stringify(liveToday)}`);
  const seed = options.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  const logLimit = options.logLimit ?? 10_000;
  if (!Number.isInteger(logLimit) || logLimit < 0) throw new RangeError(`logLimit must be an integer >= 0, got ${logLimit}`);
  const checkedDialect = (dialect: unknown): Dialect => {
    if (!isDialect(dialect)) throw new RangeError(`dialect must be 'contract' or 'legacy', got ${JSON.stringify(dialect)}`);
    return dialect;
  };
  const dialect = checkedDialect(options.dialect ?? 'contract');

  // With a pinned today (and no clock given) the clock starts at that date, at the real time of
  // day, and runs on, so timestamps of writes stay after the seeded ones.
  const clockOffset = options.today === undefined ? 0 : dayStartMs(today) + (Date.now() % MS_PER_DAY) - Date.now();
  const now = clock ?? (() => Date.now() + clockOffset);
  const tenantKeys = options.tenantKeys ?? 0;
  if (!Number.isInteger(tenantKeys) || tenantKeys < 0 || tenantKeys > MAX_TENANT_KEYS) {
    throw new RangeError(`tenantKeys must be an integer from 0 to ${MAX_TENANT_KEYS}, got ${tenantKeys}`);
  }
  const store = new SandboxStore(today, seed, liveToday ? now : null, tenantKeys);
  const context: ApiContext = { dialect, store, limiter: null, now };
  const { latencyMs, jitterMs, faultRate, rateLimit } = options;
  let knobs: SandboxKnobs = { ...DEFAULT_KNOBS };
  const setKnobs = (update: Partial<SandboxKnobs>): SandboxKnobs => {
    const checked = parseKnobs(update);
    knobs = { ...knobs, ...checked };
    // A new limit starts with fresh windows.
    if ('rateLimit' in checked) context.limiter = knobs.rateLimit ? new RateLimiter(knobs.rateLimit.limit, knobs.rateLimit.windowMs) : null;
    return knobs;
  };
  setKnobs({ latencyMs, jitterMs, faultRate, rateLimit });

  const dice = seededRandom(mixSeed(seed, 0xfa17));
  const scripted: ScriptedFault[] = [];
  const log = new MemoryRequestLog(logLimit);
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number): Promise<void> =>
    ms <= 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, ms);
          timers.add(timer);
        });

  async function serveApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: flatHeaders(req),
      body: '',
      status: 0,
      startedAt: performance.now(),
      endedAt: null,
    };
    log.begin(entry);
    res.on('finish', () => log.end(entry, res.statusCode, performance.now()));
    res.on('close', () => log.end(entry, res.writableFinished ? res.statusCode : 0, performance.now()));
    const fault = scripted.shift(); // taken on arrival, so faults go to requests in arrival order
    entry.body = await readBody(req);
    if (fault && !isHandled(fault)) return writeFault(res, fault);
    // The latency stands for the network: the answer leaves that long after the request arrived,
    // and it is worked out on arrival, within the wait, as a server answering calls in parallel
    // would. Working it out after the wait queued simultaneous calls behind each other on this one
    // thread (seven parallel stats calls came back 1-2 ms later than the latency).
    const due =
      entry.startedAt + (fault?.kind === 'delay' ? fault.ms : 0) + knobs.latencyMs + (knobs.jitterMs > 0 ? dice() * knobs.jitterMs : 0);
    // A request scripted to be handled and then broken or misreported is handled whatever the dice
    // say, so a test can rely on its write having been applied, or on the lie being told.
    const rolled = (fault === undefined || fault.kind === 'delay') && knobs.faultRate > 0 && dice() < knobs.faultRate;
    const answer = rolled ? (dice() < 0.5 ? 'html500' : 'unavailable') : null;
    const response =
      answer === null
        ? handleApi(context, {
            method: entry.method,
            path: entry.path,
            query: entry.query,
            headers: entry.headers,
            body: entry.body,
            origin: `http://${req.headers.host ?? `${host}:${port}`}`,
          })
        : null;
    const value = fault !== undefined && isMisreport(fault) ? misreported(response?.body, fault) : response?.body;
    const body = response?.html ?? (value === undefined ? '' : JSON.stringify(value));
    await sleep(due - performance.now());
    if (answer === 'html500') return writeHtml500(res);
    if (answer === 'unavailable' || response === null) return writeUnavailable(res);
    const headers = { ...(response.html === undefined ? JSON_HEADERS : HTML_HEADERS), ...response.headers };
    if (fault?.kind === 'afterHandling') return writeBrokenAnswer(res, response.status, headers, body, fault.answer);
    send(res, response.status, headers, body);
  }

  async function serveControl(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const reply = (status: number, body?: unknown): void =>
      send(res, status, status === 204 ? {} : JSON_HEADERS, body === undefined ? '' : JSON.stringify(body));
    const routes: Record<string, Record<string, () => Promise<void> | void>> = {
      '/__sandbox/health': {
        GET: () => reply(200, { status: 'ok', today: formatYmd(store.today), statsFrom: formatYmd(store.firstDay) }),
      },
      '/__sandbox/log': {
        GET: () => reply(200, log),
        DELETE: () => {
          log.reset();
          return reply(204);
        },
      },
      '/__sandbox/knobs': {
        GET: () => reply(200, knobs),
        PUT: async () => reply(200, setKnobs(parseJson(await readBody(req)) as Partial<SandboxKnobs>)),
      },
      '/__sandbox/traffic': {
        POST: async () => {
          const visits = parseTraffic(parseJson(await readBody(req)));
          const website = store.findAny(visits.websiteId);
          if (!website) return reply(404, { message: `No website with id ${visits.websiteId}.`, status: 404 });
          store.addTraffic(website, visits);
          // When the visits counted, on the clock of the log's startedAt: an /api/v1 request logged
          // after this moment reads them, one logged before does not.
          send(res, 204, { 'x-sandbox-added-at': String(performance.now()) }, '');
        },
      },
      '/__sandbox/faults': {
        POST: async () => {
          scripted.push(...parseScriptedFaults(parseJson(await readBody(req))));
          reply(204);
        },
        // The faults not served yet are dropped: the next test starts from none.
        DELETE: () => {
          scripted.length = 0;
          reply(204);
        },
      },
    };
    const route = routes[path];
    if (!route) return reply(404, { message: 'Resource not found.', status: 404 });
    const action = route[method];
    if (!action) return reply(405, { message: `Supported methods: ${Object.keys(route).join(', ')}.`, status: 405 });
    try {
      await action();
    } catch (error) {
      if (!(error instanceof TypeError || error instanceof SyntaxError)) throw error;
      reply(400, { message: error.message });
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const path = url.pathname;
    const work =
      path === '/api/v1' || path.startsWith('/api/v1/')
        ? serveApi(req, res, url)
        : path.startsWith('/__sandbox/')
          ? serveControl(req, res, path)
          : Promise.resolve(send(res, 404, JSON_HEADERS, NOT_FOUND));
    work.catch(() => (res.headersSent ? res.destroy() : writeHtml500(res)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    get dialect() {
      return context.dialect;
    },
    log,
    keys: DEMO_USERS.map((user) => user.key),
    setKnobs: (update) => void setKnobs(update),
    setDialect: (next) => void (context.dialect = checkedDialect(next)),
    scriptFaults: (faults) => void scripted.push(...parseScriptedFaults(faults)),
    revokeKey: (key, revoked = true) => store.setKeyRevoked(key, revoked),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer);
  } catch {
    // The client went away mid-body; what arrived is what we log.
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  return JSON.parse(text === '' ? 'null' : text);
}

/**
 * The body of POST /__sandbox/traffic: `{"websiteId": 1, "visitors": 3, "pageviews": 5, "page": "/pricing"}`
 * (pageviews default to the visitors, the page to `/`); a TypeError (a 400) names what is wrong.
 */
function parseTraffic(body: unknown): { websiteId: number; visitors: number; pageviews: number; page: string } {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  if (fields === null) throw new TypeError('Send a JSON object: {"websiteId": 1, "visitors": 3}.');
  const count = (name: string, fallback?: number): number => {
    const value = fields[name] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 1_000_000) {
      throw new TypeError(`${name} must be an integer from 0 to 1000000.`);
    }
    return value;
  };
  const visitors = count('visitors');
  const page = fields.page ?? '/';
  if (typeof page !== 'string' || page === '') throw new TypeError('page must be a non-empty string.');
  return { websiteId: count('websiteId'), visitors, pageviews: count('pageviews', visitors), page };
}
