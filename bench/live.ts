// The `live` pass: many subscribers of one live dashboard (`subscription { website(id:) { … } }`, GraphQL
// over SSE in graphql-sse's distinct connections mode: POST /graphql with `accept: text/event-stream`, one
// socket per stream, opened from this process with an undici Client each) on a gateway process of its own
// (LIVE_INTERVAL_S small, the key's budget and the stream bounds out of the way), against the harness's
// sandbox at --latency. What it measures:
// - the upstream calls of each poll (the sandbox's log, grouped into polls by arrival) against those of one
//   execution of the same selection as a query: all the streams share one poller;
// - the time from a change upstream (POST /__sandbox/traffic) to the event showing it, at every subscriber;
// - the gateway's RSS and heap with no stream and with all of them open, each after a forced full GC
//   (through the inspector: the gateway is started with --inspect on a free port of 127.0.0.1);
// - the dashboard scenario's p50 (autocannon at --connections) with no stream open, with all of them open
//   and idle (polls find nothing new, so nothing is pushed: the harness pins the sandbox's today, whose
//   figures then stay at the full day's) and with all of them open while a change lands every interval (each poll pushes to every
//   stream).
import { Client, type Dispatcher } from 'undici';
import { runGatewayLoad, sizedAmount, type LoadResult } from './load.js';
import { median, percentiles } from './percentiles.js';
import { cpuTimeMs, freePort, inspect, memoryMb, until, type ChildServer } from './processes.js';
import { type LogEntry, type RestClient, type SandboxControl, callSignature } from './rest.js';
import { SCENARIOS, type ScenarioContext } from './scenarios.js';

export interface LivePassOptions {
  /** Sandbox latency (--latency). */
  latencyMs: number;
  /** autocannon's connections in the dashboard runs (--connections). */
  connections: number;
  /** Streams opened at once, all on one key and one document (--live-subscribers). */
  subscribers: number;
  /** LIVE_INTERVAL_S of the pass's gateway, seconds from 0.1, at most 3 decimals (--live-interval). */
  intervalSeconds: number;
  /** Intervals over which the polls' upstream calls are counted (--live-intervals). */
  countIntervals: number;
  /** Changes (POST /__sandbox/traffic) whose arrival is timed at every subscriber (--live-changes). */
  changes: number;
  /** Visitors each change adds to website 1's today. */
  visitorsPerChange: number;
}

export const DEFAULT_LIVE = { subscribers: 1000, intervalSeconds: 2, countIntervals: 5, changes: 10, visitorsPerChange: 3 } as const;

/** Targets: p99 of change → event within interval + upstream RTT + marginMs; p50 with the streams ÷ without ≤ p50Ratio. */
export const LIVE_TARGETS = { marginMs: 100, p50Ratio: 1.1 } as const;

/** Starts a gateway on the harness's sandbox with this environment and these node flags on top of the harness's. */
export type LiveGatewayStarter = (extraEnv: Record<string, string>, extraNodeArgs: readonly string[]) => Promise<ChildServer>;

export interface LiveHarness {
  control: SandboxControl;
  /** Straight to the sandbox (the upstream round trip is timed with it). */
  rest: RestClient;
  startGateway: LiveGatewayStarter;
  key: string;
  /** The dashboard scenario's context (its p50 runs). */
  context: ScenarioContext;
  /** The sandbox's today. */
  today: string;
  durationSeconds: number;
  warmupSeconds: number;
  /** Rounds of dashboard runs (each: with the streams open, idle and changing, and with none). */
  repeat: number;
  log(line: string): void;
}

/** The selection every subscriber watches: a dashboard of today (website 1 and four statistics of today). */
const SELECTION =
  'website(id: $id) { id domain ' +
  'visitors: stats(name: VISITOR, period: TODAY) { nodes { value count } } ' +
  'pageviews: stats(name: PAGEVIEW, period: TODAY) { nodes { value count } } ' +
  'pages: stats(name: PAGE, period: TODAY) { nodes { value count } } ' +
  'countries: stats(name: COUNTRY, period: TODAY) { nodes { value count } } }';
export const LIVE_SUBSCRIPTION = `subscription LiveDashboard($id: ID!) { ${SELECTION} }`;
/** The same selection as a query: what one poll runs. */
export const LIVE_QUERY = `query LiveDashboard($id: ID!) { ${SELECTION} }`;
const WEBSITE_ID = 1;

export interface MemorySnapshot {
  /** VmRSS of /proc/<pid>/status. */
  rssMb: number | null;
  /** process.memoryUsage() in the gateway, read through the inspector; null when it could not be read. */
  heapUsedMb: number | null;
  heapTotalMb: number | null;
  externalMb: number | null;
  /** A full GC was forced just before (HeapProfiler.collectGarbage, twice). */
  gc: boolean;
}

/** One change: the delays (ms from the POST to the event showing it) across the subscribers. */
export interface LiveChange {
  received: number;
  /** Subscribers that did not get it before the time-out. */
  missing: number;
  first: number;
  p50: number;
  p99: number;
  max: number;
  /** max − first: how long one push to every stream took to arrive, as this process saw it. */
  spread: number;
  /**
   * From the POST to the start of the poll that read the change (its visitors call's arrival at the sandbox,
   * on this process's clock): the part of the delay that is only where the change landed in the interval.
   * null when that poll was not found in the sandbox's log.
   */
  waitMs: number | null;
  /** From that poll's start to the event at each subscriber (delay − waitMs): the poll's round trip, the gateway, the push. */
  afterPoll: { p50: number; p99: number; max: number } | null;
  /** CPU time from the POST to the last arrival: the gateway's (/proc, 10 ms ticks: its poll and push), and this process's (receiving). */
  gatewayCpuMs: number | null;
  harnessCpuMs: number;
}

export type LiveStreamsState = 'none' | 'open' | 'open+changes';

/** One measured dashboard run (after its own warm-up). */
export interface LiveDashboardRun {
  streams: LiveStreamsState;
  round: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** open+changes: events each stream got during the run (median over the streams). */
  eventsPerStream: number | null;
}

export interface LivePassResult extends LivePassOptions {
  /** Dashboard rounds, and each run's seconds (after a warm-up of warmupSeconds). */
  repeat: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** What the pass's gateway got on top of the harness's environment. */
  gatewayEnv: Record<string, string>;
  document: string;
  /** Upstream calls of each execution of LIVE_QUERY (no stream open). */
  queryCalls: number[];
  /** The polls seen while every stream was open and nothing changed. */
  polls: {
    /** Calls of each poll. */
    calls: number[];
    /** Time between the starts of consecutive polls. */
    gapsMs: number[];
    /** Each poll's upstream time at the sandbox: its first call's arrival to its last call's answer. */
    upstreamMs: number[];
    windowSeconds: number;
    /** Every poll made the same calls (method, path, query) as the query. */
    sameCalls: boolean;
  };
  /**
   * The gateway's CPU time a second (/proc, 10 ms ticks) over a window as long as the polls' one, with no stream
   * open (nothing to do), and over the polls' window (every stream open, a poll each interval, nothing pushed but
   * the heartbeats): what holding the streams costs.
   */
  idleCpuMsPerSecond: { none: number | null; open: number | null };
  /** One upstream call from this process (the dashboard's visitors of today), median of 20. */
  rttMs: number;
  /** intervalSeconds × 1000 + rttMs + LIVE_TARGETS.marginMs. */
  boundMs: number;
  /** Seconds each opening of the streams took, until every one had its first event. */
  openSeconds: number[];
  /** Each change's delays across the subscribers. */
  perChange: LiveChange[];
  /** Over every change and subscriber. */
  delays: { count: number; missing: number; p50: number; p99: number; max: number; withinBound: number };
  /** Over every change and subscriber: from the start of the poll that read the change to the event (delay − wait). */
  afterPoll: { count: number; p50: number; p99: number; max: number };
  /**
   * A change made just after a poll read its data waits a whole period for the next poll (the interval from the end of
   * the last poll: the median gap between polls), then takes the after-poll time: median gap + afterPoll.p99.
   */
  worstCaseMs: number;
  /** The sandbox's clock − this process's (performance.now()), from the arrival of 5 calls; null when not found. */
  clockOffsetMs: number | null;
  memory: {
    none: MemorySnapshot;
    open: MemorySnapshot;
    /** After the last stream closed (and the dashboard runs). */
    closed: MemorySnapshot | null;
    rssKbPerStream: number | null;
    heapKbPerStream: number | null;
  };
  runs: LiveDashboardRun[];
  /** Medians of the runs' p50, and with ÷ without. */
  p50: { none: number; open: number; openChanging: number; ratio: number; changingRatio: number };
  /** Upstream calls in the 2 intervals after the last stream closed (the poller stopped: 0). */
  callsAfterClose: number | null;
  gatewayPeakRssMb: number | null;
  notes: string[];
}

/** The fewest requests of a measured dashboard run (its p50 and p99 come from them). */
const MIN_DASHBOARDS = 20;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

interface Arrival {
  /** performance.now() when the event's last byte was read. */
  at: number;
  /** Its `data`: the result as JSON text. */
  text: string;
}

type ResponseBody = Dispatcher.ResponseData['body'];

/** One subscriber: its own socket (an undici Client), the SSE events as they come. */
class Stream {
  events = 0;
  last: Arrival | null = null;
  /** While set, every event is kept here too. */
  recorded: Arrival[] | null = null;
  /** Why it ended, if it ended without being closed from here. */
  ended: string | null = null;
  private closing = false;
  private buffer = '';

  private constructor(
    private readonly client: Client,
    private readonly body: ResponseBody,
  ) {
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      const at = performance.now();
      this.buffer += chunk;
      for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        this.take(block, at);
      }
    });
    body.on('error', (error: Error) => this.end(`error: ${error.message}`));
    body.on('end', () => this.end('the gateway ended the response'));
    body.on('close', () => this.end('closed'));
  }

  static async open(url: URL, headers: Record<string, string>, payload: string, timeoutMs: number): Promise<Stream> {
    // No body time-out: an idle stream gets only a heartbeat every 12 s.
    const client = new Client(url.origin, { bodyTimeout: 0, headersTimeout: timeoutMs, connectTimeout: timeoutMs });
    try {
      const { statusCode, body } = await client.request({ method: 'POST', path: url.pathname, headers, body: payload });
      if (statusCode !== 200) {
        const text = await body.text().catch(() => '');
        throw new Error(`HTTP ${statusCode}: ${text.slice(0, 200)}`);
      }
      return new Stream(client, body);
    } catch (error) {
      await client.destroy().catch(() => undefined);
      throw error;
    }
  }

  private take(block: string, at: number): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a heartbeat, or the comment yoga opens with
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (event === 'complete') return this.end('completed by the gateway');
    if (event !== 'next' || data.length === 0) return;
    const arrival = { at, text: data.join('\n') };
    this.events++;
    this.last = arrival;
    this.recorded?.push(arrival);
  }

  private end(reason: string): void {
    if (!this.closing) this.ended ??= reason;
  }

  /** Leaves (the client goes away): the socket is destroyed. */
  async close(): Promise<void> {
    this.closing = true;
    this.body.destroy();
    await this.client.destroy().catch(() => undefined);
  }
}

/** The subscribers: opened and closed all together. */
class Streams {
  list: Stream[] = [];
  /** Why streams could not be opened, with counts. */
  readonly refused = new Map<string, number>();

  constructor(
    private readonly url: URL,
    private readonly key: string,
  ) {}

  /** Opens `count` streams, `concurrency` at a time; resolves once each has had its first event (seconds taken). */
  async open(count: number, timeoutMs: number, concurrency = 50): Promise<number> {
    const started = performance.now();
    const payload = JSON.stringify({ query: LIVE_SUBSCRIPTION, variables: { id: String(WEBSITE_ID) }, operationName: 'LiveDashboard' });
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${this.key}` };
    let next = 0;
    const opened: Stream[] = [];
    const worker = async (): Promise<void> => {
      while (next < count) {
        next++;
        try {
          opened.push(await Stream.open(this.url, headers, payload, timeoutMs));
        } catch (error) {
          const reason = (error as Error).message;
          this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    this.list.push(...opened);
    await until(() => opened.every((stream) => stream.events > 0 || stream.ended !== null), timeoutMs, 20);
    return (performance.now() - started) / 1000;
  }

  /** Streams that ended or never had an event: reasons with counts. */
  problems(): Map<string, number> {
    const out = new Map<string, number>();
    for (const stream of this.list) {
      const reason = stream.ended ?? (stream.events === 0 ? 'no event yet' : null);
      if (reason !== null) out.set(reason, (out.get(reason) ?? 0) + 1);
    }
    return out;
  }

  async closeAll(): Promise<void> {
    const list = this.list;
    this.list = [];
    await Promise.all(list.map((stream) => stream.close()));
  }
}

/**
 * The gateway's memory after two forced full GCs and a pause of `pauseMs` (the pages freed leave its
 * RSS); without the inspector, after a second's pause only.
 */
export async function settledMemory(pid: number, inspectorPort: number | null, notes: string[], pauseMs = 500): Promise<MemorySnapshot> {
  if (inspectorPort !== null) {
    try {
      const gc = { method: 'HeapProfiler.collectGarbage' };
      await inspect(inspectorPort, [gc, gc]);
      await sleep(pauseMs);
      const [usage] = await inspect(inspectorPort, [
        { method: 'Runtime.evaluate', params: { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true } },
      ]);
      const value = (usage as { result?: { value?: unknown } }).result?.value;
      const memory = JSON.parse(String(value)) as { heapUsed: number; heapTotal: number; external: number };
      const mb = (bytes: number): number => bytes / 1024 / 1024;
      return {
        rssMb: memoryMb(pid, 'VmRSS'),
        heapUsedMb: mb(memory.heapUsed),
        heapTotalMb: mb(memory.heapTotal),
        externalMb: mb(memory.external),
        gc: true,
      };
    } catch (error) {
      notes.push(`memory: the inspector failed (${(error as Error).message}): RSS read without a forced GC, no heap figures`);
    }
  }
  await sleep(1_000);
  return { rssMb: memoryMb(pid, 'VmRSS'), heapUsedMb: null, heapTotalMb: null, externalMb: null, gc: false };
}

/** Each entry's signature, once each, sorted: a read tried again is one. */
function signatures(entries: readonly LogEntry[]): string[] {
  return [...new Set(entries.map(callSignature))].sort();
}

/**
 * The log's entries grouped into polls, in order of arrival: a poll makes each of the query's `calls`
 * once, so a call the current poll has made starts the next one once it has made them all (before, it
 * is a read tried again). Not by the time between arrivals: on a busy machine a late poll and the next
 * one on time arrive close together, and a poll's own calls apart.
 */
function pollsOf(entries: readonly LogEntry[], calls: number): LogEntry[][] {
  const sorted = entries.filter((entry) => typeof entry.startedAt === 'number').sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0));
  const polls: { entries: LogEntry[]; made: Set<string> }[] = [];
  for (const entry of sorted) {
    const signature = callSignature(entry);
    let current = polls.at(-1);
    if (current?.made.has(signature) && current.made.size < calls) continue;
    if (current === undefined || current.made.has(signature)) {
      current = { entries: [], made: new Set() };
      polls.push(current);
    }
    current.entries.push(entry);
    current.made.add(signature);
  }
  return polls.map((poll) => poll.entries);
}

/** Waits until the sandbox has nothing in flight (a poll under way finishes), up to `ms`. */
async function quiet(control: SandboxControl, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while ((await control.count()).inFlight > 0 && performance.now() < end) await sleep(20);
}

function describe(reasons: Map<string, number>): string {
  return [...reasons].map(([reason, count]) => `${count} × ${reason}`).join('; ');
}

export async function runLivePass(options: LivePassOptions, harness: LiveHarness): Promise<LivePassResult> {
  const { control, log } = harness;
  const notes: string[] = [];
  const n = options.subscribers;
  const intervalMs = Math.round(options.intervalSeconds * 1000);
  const gatewayEnv: Record<string, string> = {
    LIVE_INTERVAL_S: String(options.intervalSeconds),
    // The most config.ts accepts: a poll's few calls then need a few ms of the key's minute, never the interval.
    LIVE_CALLS_PER_MIN: '100000',
    // Room for every stream, and for a reopening while the gateway still counts streams just closed.
    LIVE_MAX_STREAMS: String(2 * n + 100),
    LIVE_MAX_STREAMS_PER_KEY: String(2 * n + 100),
    LIVE_MAX_LIFETIME_S: '86400',
  };
  log(
    `pass "live": ${n} subscribers on one key, LIVE_INTERVAL_S=${options.intervalSeconds}, ${options.latencyMs} ms sandbox, ` +
      `dashboard runs at ${options.connections} connections`,
  );
  await control.setLatency(options.latencyMs);
  const inspectorPort = await freePort();
  const gateway = await harness.startGateway(gatewayEnv, [`--inspect=127.0.0.1:${inspectorPort}`]);
  const url = new URL(gateway.url);
  const streams = new Streams(url, harness.key);
  const openTimeoutMs = 60_000 + n * 20;
  try {
    // One upstream round trip from here: the visitors of today, as a poll reads them.
    const visitorsNow = async (): Promise<number | null> => {
      const page = (await harness.rest.call({
        method: 'GET',
        path: `/stats/${WEBSITE_ID}`,
        query: { name: 'visitor', from: harness.today, to: harness.today, sort_by: 'count', sort: 'desc', per_page: '10', page: '1' },
      })) as { data?: { count?: unknown }[] };
      const count = page.data?.[0]?.count;
      return typeof count === 'number' ? count : null;
    };
    const rtts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await visitorsNow();
      rtts.push(performance.now() - started);
    }
    const rttMs = median(rtts) ?? Number.NaN;
    const boundMs = intervalMs + rttMs + LIVE_TARGETS.marginMs;

    // The selection as a query, three times, no stream open: the calls one execution makes.
    log('  the selection as a query: its upstream calls');
    const queryCalls: number[] = [];
    let querySignatures: string[] = [];
    for (let i = 0; i < 3; i++) {
      await control.settle();
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.key}` },
        body: JSON.stringify({ query: LIVE_QUERY, variables: { id: String(WEBSITE_ID) }, operationName: 'LiveDashboard' }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status !== 200 || text.includes('"errors"'))
        notes.push(`the query answered HTTP ${response.status}: ${text.slice(0, 300)}`);
      await quiet(control);
      // Answered calls: an attempt the gateway tries again (its socket broke under load) is not a call more.
      querySignatures = signatures(await control.answered());
      queryCalls.push(querySignatures.length);
    }

    // Warm-up: the dashboard, and a few streams opened and closed (their code paths compiled before the memory is read).
    log('  warm-up: the dashboard, and a few streams');
    const steps = SCENARIOS.dashboard.steps(harness.context);
    const load = (size: { seconds: number } | { amount: number }): Promise<LoadResult> =>
      runGatewayLoad({
        url: gateway.url,
        authorization: `Bearer ${harness.key}`,
        connections: options.connections,
        steps,
        ok: SCENARIOS.dashboard.ok,
        ...size,
      });
    await load({ seconds: harness.warmupSeconds });
    await streams.open(Math.min(20, n), openTimeoutMs);
    await streams.closeAll();
    await control.settle();

    log('  memory with no stream open, and CPU');
    const memoryNone = await settledMemory(gateway.pid, inspectorPort, notes, control.quietMs);
    const cpuPerSecond = async (seconds: number): Promise<number | null> => {
      const before = cpuTimeMs(gateway.pid);
      const started = performance.now();
      await sleep(seconds * 1000);
      const after = cpuTimeMs(gateway.pid);
      return before === null || after === null ? null : (after - before) / ((performance.now() - started) / 1000);
    };
    const idleCpuNone = await cpuPerSecond((options.countIntervals * intervalMs) / 1000);
    log(`  opening ${n} streams`);
    const openSeconds = [await streams.open(n, openTimeoutMs)];
    if (streams.refused.size > 0) notes.push(`streams not opened: ${describe(streams.refused)}`);
    const openProblems = streams.problems();
    if (openProblems.size > 0) notes.push(`after opening: ${describe(openProblems)}`);
    const open = streams.list.length;
    log(`  ${open} streams open in ${openSeconds[0]?.toFixed(1)} s; memory with them open`);
    const memoryOpen = await settledMemory(gateway.pid, inspectorPort, notes, control.quietMs);

    // The polls while every stream is open and nothing changes.
    log(`  counting upstream calls over ${options.countIntervals} intervals`);
    // The streams poll every interval: a quiet spell of half of one (300 ms at most) is what there is to wait for.
    await control.settle(Math.min(control.quietMs, intervalMs / 2));
    const windowStarted = performance.now();
    const windowCpu = cpuTimeMs(gateway.pid);
    await sleep(options.countIntervals * intervalMs + intervalMs / 4);
    await quiet(control);
    const windowCpuMs = windowCpu === null ? null : (cpuTimeMs(gateway.pid) ?? Number.NaN) - windowCpu;
    const windowSeconds = (performance.now() - windowStarted) / 1000;
    const polls = pollsOf(await control.answered(), querySignatures.length);
    const starts = polls.map((poll) => poll[0]?.startedAt ?? Number.NaN);
    const pollFigures = {
      calls: polls.map((poll) => poll.length),
      gapsMs: starts.slice(1).map((at, i) => at - (starts[i] as number)),
      upstreamMs: polls.map(
        (poll) => Math.max(...poll.map((entry) => entry.endedAt ?? Number.NaN)) - Math.min(...poll.map((entry) => entry.startedAt ?? 0)),
      ),
      windowSeconds,
      sameCalls: polls.length > 0 && polls.every((poll) => signatures(poll).join('\n') === querySignatures.join('\n')),
    };
    const idleCpuMsPerSecond = { none: idleCpuNone, open: windowCpuMs === null ? null : windowCpuMs / windowSeconds };
    if (polls.length > 0 && !pollFigures.sameCalls) {
      notes.push(
        `a poll's calls differ from the query's: query ${JSON.stringify(querySignatures)}, a poll ${JSON.stringify(signatures(polls[0] ?? []))}`,
      );
    }

    // Changes: each lands at a random point of the interval; the delay of the event showing it, at every stream.
    log(`  ${options.changes} changes, timed at every stream`);
    const visitors = new Map<string, number | null>();
    const visitorsOf = (text: string): number | null => {
      let value = visitors.get(text);
      if (value === undefined) {
        try {
          const result = JSON.parse(text) as { data?: { website?: { visitors?: { nodes?: { count?: unknown }[] } } } };
          const count = result.data?.website?.visitors?.nodes?.[0]?.count;
          value = typeof count === 'number' ? count : null;
        } catch {
          value = null;
        }
        visitors.set(text, value);
      }
      return value;
    };
    // The sandbox's clock against this one: the arrival (in its log) of calls sent from here, the earliest
    // arrival − send. The polls' starts then read on this clock, within a fraction of a millisecond.
    await control.resetLog();
    const sent: number[] = [];
    for (let i = 0; i < 5; i++) {
      sent.push(performance.now());
      await harness.rest.call({ method: 'GET', path: '/websites', query: { per_page: '25', page: String(i + 1) } });
    }
    const calibration = (await control.entries()).filter((entry) => entry.path === '/api/v1/websites' && entry.query.per_page === '25');
    const clockOffsetMs =
      calibration.length === sent.length
        ? Math.min(...calibration.map((entry, i) => (entry.startedAt ?? Number.NaN) - (sent[i] as number)))
        : null;
    if (clockOffsetMs === null || !Number.isFinite(clockOffsetMs))
      notes.push("the sandbox's clock could not be read: no wait/after-poll split");
    const timed: {
      posted: number;
      /** When the sandbox counted the change, on its clock. */
      addedAt: number;
      delays: number[];
      missing: number;
      gatewayCpuMs: number | null;
      harnessCpuMs: number;
    }[] = [];
    for (let change = 1; change <= options.changes; change++) {
      await sleep(Math.random() * intervalMs);
      visitors.clear();
      const live = streams.list.filter((stream) => stream.ended === null);
      // Every stream shows the latest result (the previous change reached them all, or timed out).
      await until(() => new Set(live.map((stream) => stream.last?.text)).size === 1, 2 * intervalMs + 5_000, 20);
      // A sandbox whose today grows by itself (today not pinned) moves at each minute of its clock: the figure is read
      // from it just before the change, away from a minute's turn, so that only the change can take an event past it.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute < 300 || intoMinute > 59_500) await sleep((60_300 - intoMinute) % 60_000);
      const base = await visitorsNow();
      if (base === null) {
        notes.push(`change ${change}: the sandbox answered no visitors of today to compare with; not timed`);
        continue;
      }
      const expected = base + options.visitorsPerChange;
      for (const stream of live) stream.recorded = [];
      const delays: number[] = Array.from({ length: live.length }, () => Number.NaN);
      const looked = live.map(() => 0);
      let pending = live.length;
      const gatewayCpu = cpuTimeMs(gateway.pid);
      const harnessCpu = process.cpuUsage();
      const posted = performance.now();
      const addedAt = await control.traffic(WEBSITE_ID, options.visitorsPerChange);
      await until(
        () => {
          live.forEach((stream, i) => {
            if (!Number.isNaN(delays[i] as number)) return;
            const recorded = stream.recorded ?? [];
            for (; (looked[i] as number) < recorded.length; looked[i] = (looked[i] as number) + 1) {
              const arrival = recorded[looked[i] as number] as Arrival;
              if ((visitorsOf(arrival.text) ?? Number.NEGATIVE_INFINITY) >= expected) {
                delays[i] = arrival.at - posted;
                pending--;
                break;
              }
            }
          });
          return pending === 0;
        },
        2 * intervalMs + rttMs + 10_000,
        20,
      );
      const harnessUsage = process.cpuUsage(harnessCpu);
      const gatewayCpuMs = gatewayCpu === null ? null : (cpuTimeMs(gateway.pid) ?? Number.NaN) - gatewayCpu;
      for (const stream of live) stream.recorded = null;
      const got = delays.filter((delay) => !Number.isNaN(delay));
      timed.push({
        posted,
        addedAt,
        delays: got,
        missing: n - got.length,
        gatewayCpuMs,
        harnessCpuMs: (harnessUsage.user + harnessUsage.system) / 1000,
      });
      log(
        `    change ${change}: p50 ${percentiles(got).p50.toFixed(0)} ms, max ${Math.max(...got).toFixed(0)} ms, ${got.length}/${n} streams`,
      );
    }
    // The poll that read each change: the first whose visitors call reached the sandbox after the change
    // counted, both on the sandbox's clock. (Not after the harness had the POST's answer: a poll can read
    // the change between the two, and the next poll, an interval later, would be taken for it.)
    const visitorCalls = (await control.entries())
      .filter((entry) => entry.path === `/api/v1/stats/${WEBSITE_ID}` && entry.query.name === 'visitor')
      .map((entry) => entry.startedAt ?? Number.NaN)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    const maxOf = (values: readonly number[]): number => (values.length > 0 ? Math.max(...values) : Number.NaN);
    const allDelays: number[] = [];
    const allAfterPoll: number[] = [];
    const changes: LiveChange[] = timed.map(({ posted, addedAt, delays: got, missing, gatewayCpuMs, harnessCpuMs }) => {
      const { p50, p99 } = percentiles(got);
      const first = got.length > 0 ? Math.min(...got) : Number.NaN;
      const max = maxOf(got);
      const readAt = visitorCalls.find((at) => at > addedAt);
      // That poll's start on this process's clock, from the POST.
      const waitMs =
        readAt === undefined || got.length === 0 || clockOffsetMs === null || !Number.isFinite(clockOffsetMs)
          ? null
          : readAt - clockOffsetMs - posted;
      const after = waitMs === null ? [] : got.map((delay) => delay - waitMs);
      allDelays.push(...got);
      allAfterPoll.push(...after);
      const afterFigures = percentiles(after);
      return {
        received: got.length,
        missing,
        first,
        p50,
        p99,
        max,
        spread: max - first,
        waitMs,
        afterPoll: waitMs === null ? null : { p50: afterFigures.p50, p99: afterFigures.p99, max: maxOf(after) },
        gatewayCpuMs,
        harnessCpuMs,
      };
    });
    const pooled = percentiles(allDelays);
    const delays = {
      count: allDelays.length,
      missing: timed.reduce((sum, change) => sum + change.missing, 0),
      p50: pooled.p50,
      p99: pooled.p99,
      max: maxOf(allDelays),
      withinBound: allDelays.filter((delay) => delay <= boundMs).length,
    };
    const pooledAfter = percentiles(allAfterPoll);
    const afterPoll = { count: allAfterPoll.length, p50: pooledAfter.p50, p99: pooledAfter.p99, max: maxOf(allAfterPoll) };
    const worstCaseMs = (median(pollFigures.gapsMs) ?? Number.NaN) + afterPoll.p99;

    // The dashboard: rounds alternating which comes first, with the streams open (idle, then changing) or none.
    const runs: LiveDashboardRun[] = [];
    const measure = async (streamsState: LiveStreamsState, round: number): Promise<void> => {
      log(
        `  dashboard, ${streamsState === 'none' ? 'no stream open' : `${streams.list.length} streams ${streamsState === 'open' ? 'open, idle' : 'open, a change every interval'}`} (run ${round}/${harness.repeat})`,
      );
      // Sized from its warm-up, as the scenario passes' runs: about the run's duration, and enough requests for a p50.
      const warmup = await load({ seconds: harness.warmupSeconds });
      const eventsBefore = streams.list.map((stream) => stream.events);
      const change = (): void => void control.traffic(WEBSITE_ID, options.visitorsPerChange).catch(() => undefined);
      const timer = streamsState === 'open+changes' ? setInterval(change, intervalMs) : null;
      if (timer) change();
      let result: LoadResult;
      try {
        result = await load({ amount: sizedAmount(warmup, options.connections, steps.length, harness.durationSeconds, MIN_DASHBOARDS) });
      } finally {
        if (timer) clearInterval(timer);
      }
      const { p50, p99 } = percentiles(result.latencies);
      runs.push({
        streams: streamsState,
        round,
        requests: result.completed,
        errors: result.errors,
        requestsPerSecond: result.completed / result.seconds,
        p50,
        p99,
        eventsPerStream:
          streamsState === 'open+changes' ? median(streams.list.map((stream, i) => stream.events - (eventsBefore[i] ?? 0))) : null,
      });
    };
    for (let round = 1; round <= harness.repeat; round++) {
      if (streams.list.length > 0) {
        await measure('open', round);
        await measure('open+changes', round);
        await streams.closeAll();
        await sleep(control.quietMs);
        await measure('none', round);
      } else {
        await measure('none', round);
        log(`  reopening ${n} streams`);
        openSeconds.push(await streams.open(n, openTimeoutMs));
        await measure('open', round);
        await measure('open+changes', round);
      }
    }
    const lost = streams.problems();
    if (lost.size > 0) notes.push(`streams lost during the dashboard runs: ${describe(lost)}`);
    if (streams.refused.size > 0 && !notes.some((note) => note.startsWith('streams not opened')))
      notes.push(`streams not opened: ${describe(streams.refused)}`);
    await streams.closeAll();

    // Every stream gone: the poller stops (no more calls), and what memory is left.
    await sleep(control.quietMs);
    await control.settle();
    await sleep(2 * intervalMs);
    const callsAfterClose = (await control.count()).count;
    const memoryClosed = await settledMemory(gateway.pid, inspectorPort, notes, control.quietMs);

    const p50Of = (state: LiveStreamsState): number =>
      median(runs.filter((run) => run.streams === state).map((run) => run.p50)) ?? Number.NaN;
    const p50 = { none: p50Of('none'), open: p50Of('open'), openChanging: p50Of('open+changes'), ratio: 0, changingRatio: 0 };
    p50.ratio = p50.open / p50.none;
    p50.changingRatio = p50.openChanging / p50.none;
    const errors = runs.reduce((sum, run) => sum + run.errors, 0);
    if (errors > 0) notes.push(`${errors} dashboard requests failed (transport error, non-2xx or GraphQL errors)`);
    const perStream = (before: number | null, after: number | null): number | null =>
      before === null || after === null || open === 0 ? null : ((after - before) * 1024) / open;
    return {
      ...options,
      repeat: harness.repeat,
      durationSeconds: harness.durationSeconds,
      warmupSeconds: harness.warmupSeconds,
      gatewayEnv,
      document: LIVE_SUBSCRIPTION,
      queryCalls,
      polls: pollFigures,
      rttMs,
      boundMs,
      openSeconds,
      perChange: changes,
      delays,
      afterPoll,
      worstCaseMs,
      idleCpuMsPerSecond,
      clockOffsetMs,
      memory: {
        none: memoryNone,
        open: memoryOpen,
        closed: memoryClosed,
        rssKbPerStream: perStream(memoryNone.rssMb, memoryOpen.rssMb),
        heapKbPerStream: perStream(memoryNone.heapUsedMb, memoryOpen.heapUsedMb),
      },
      runs,
      p50,
      callsAfterClose,
      gatewayPeakRssMb: memoryMb(gateway.pid, 'VmHWM'),
      notes,
    };
  } finally {
    await streams.closeAll();
    await gateway.stop();
    await control.settle().catch(() => undefined);
  }
}
