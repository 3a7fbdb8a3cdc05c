// What strangers send a gateway that faces the internet, for the soak (soak.ts) to mix into its load:
// a fragment chain that doubles at each level, bodies trickled a byte at a time, a stream of distinct
// large documents, floods of APQ registrations, readers that never read GraphiQL's page, queries
// disguised as event streams. None of them has a key the install accepts. And one with a key: streams
// churned on new documents under forty spellings of it, asking for `*/*`. Every answer is read as the
// load's are and counted by status and error code.
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Pool } from 'undici';

export const ATTACK_KINDS = ['chain', 'trickle', 'documents', 'apq', 'stalled', 'disguised', 'live'] as const;
export type AttackKind = (typeof ATTACK_KINDS)[number];

export interface AttackOptions {
  kinds: readonly AttackKind[];
  /** Fragments in the chain; each spreads the next twice, so the expanded document has 2^depth fields. */
  chainDepth: number;
  trickleConnections: number;
  /** Connections that ask for GraphiQL's page and never read it (opened again when the gateway ends them). */
  stalledConnections: number;
  /** Subscriptions closed and opened again on new documents every half second. */
  liveStreams: number;
  /** Requests in flight at once for each of chain, documents, apq and disguised. */
  senders: number;
  /** A trickled body gets its next byte after a random pause in [min, max) milliseconds. */
  trickleByteEveryMs: { min: number; max: number };
  /** A sender gives up on an answer after this long (a hang is counted, not waited out). */
  answerTimeoutMs: number;
}

export const DEFAULT_ATTACK_OPTIONS: AttackOptions = {
  kinds: [],
  chainDepth: 30,
  trickleConnections: 40,
  stalledConnections: 16,
  liveStreams: 10,
  senders: 4,
  trickleByteEveryMs: { min: 1_000, max: 2_000 },
  answerTimeoutMs: 30_000,
};

/** A key the install refuses: it costs the gateway an upstream call to find out. */
export const FOREIGN_KEY = 'Bearer not-a-real-key';
/** A key of the sandbox that owns website 1: the chain must be refused before it can run for it too. */
const OWNER_KEY = 'Bearer sandbox-key-1';

export interface Distribution {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles and the maximum, in the samples' unit rounded to 0.1; null when there are none. */
export function distribution(samples: ArrayLike<number>): Distribution | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number): number => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] ?? Number.NaN;
  const round = (value: number): number => Math.round(value * 10) / 10;
  return {
    count: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

export interface GraphQLAnswer {
  data?: unknown;
  errors?: { message?: unknown; extensions?: { code?: unknown } }[];
}

export interface ReadAnswer {
  /** Status and error codes, e.g. `200 data`, `200 NOT_FOUND`, `200 FIELD_LIMIT_EXCEEDED`, `503 OVERLOADED`. */
  label: string;
  body: GraphQLAnswer | null;
  /** A GraphQL response (data or errors, each error with a message), and no 5xx but a 503 OVERLOADED. */
  wellFormed: boolean;
}

/** One answer, as the load and the attacks both read it. */
export function readAnswer(status: number, text: string): ReadAnswer {
  let body: GraphQLAnswer;
  try {
    body = JSON.parse(text) as GraphQLAnswer;
  } catch {
    return { label: `${status} not JSON`, body: null, wellFormed: false };
  }
  if (typeof body !== 'object' || body === null) return { label: `${status} not an object`, body: null, wellFormed: false };
  const errors = Array.isArray(body.errors) ? body.errors : [];
  const codes = [
    ...new Set(errors.map((error) => (typeof error.extensions?.code === 'string' ? error.extensions.code : 'no code'))),
  ].sort();
  const label = `${status} ${codes.length > 0 ? codes.join('+') : 'data' in body ? 'data' : 'empty'}`;
  // OVERLOADED is the gateway's designed answer to more work than it takes in; any other 5xx is a failure.
  const statusAllowed = status < 500 || (status === 503 && codes.length === 1 && codes[0] === 'OVERLOADED');
  const wellFormed =
    statusAllowed &&
    ('data' in body || 'errors' in body) &&
    (body.errors === undefined || (Array.isArray(body.errors) && errors.every((error) => typeof error.message === 'string')));
  return { label, body, wellFormed };
}

/** `query Q { website(id: "1") { ...F0 } }` and fragments F0…F(depth-1), each spreading the next twice. */
export function fragmentChain(depth: number, operationName = 'Q'): string {
  const fragments = Array.from({ length: depth }, (_, level) =>
    level === depth - 1 ? `fragment F${level} on Website { id }` : `fragment F${level} on Website { id ...F${level + 1} ...F${level + 1} }`,
  );
  return `query ${operationName} { website(id: "1") { ...F0 } } ${fragments.join(' ')}`;
}

/**
 * About 8 KB that parse and validate within the default limits (25 aliases of 30, under 100 tokens of
 * 2,000: comments are not tokens), distinct for each n in its text and in its aliases, so every one
 * is a new entry for the parse and validation caches.
 */
export function uniqueDocument(n: number): string {
  const comment = `# request ${n}: ${'padding that differs per request '.repeat(8)}\n`.repeat(16);
  const fields = ['id', 'domain', '__typename'];
  const aliases = Array.from({ length: 25 }, (_, i) => `a${n}_${i}_${'x'.repeat(100)}: ${fields[i % fields.length]}`);
  return `${comment}query D${n} { website(id: "1") { ${aliases.join(' ')} } }`;
}

/** A distinct document of about 4 KB and its SHA-256, as an APQ client registers it. */
export function apqRegistration(n: number): { query: string; extensions: { persistedQuery: { version: 1; sha256Hash: string } } } {
  const query = `query A${n} { website(id: "1") { id domain } }\n${`# registration ${n} ${'.'.repeat(60)}\n`.repeat(50)}`;
  return { query, extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } } };
}

export interface RequestAttackReport {
  sent: number;
  /** Answers by `readAnswer` label, and `no answer: <code>` for a timeout or a broken connection. */
  answers: Record<string, number>;
}

export interface TrickleReport {
  /** Connections opened, reopenings included. */
  opened: number;
  bytesSent: number;
  /** How the gateway ended a connection: its status (`408`), `reset`, or `closed` (ended with no answer). */
  closes: Record<string, number>;
  /** Lifetimes of the connections the gateway ended, in seconds. */
  lifetimeS: Distribution | null;
  /** Connections open (when the attack stopped, once it has), and the age of the oldest, in seconds. */
  open: number;
  oldestOpenS: number;
}

export interface AttacksReport {
  chain?: RequestAttackReport;
  documents?: RequestAttackReport;
  apq?: RequestAttackReport;
  disguised?: RequestAttackReport;
  trickle?: TrickleReport;
  stalled?: TrickleReport;
  /** The first event of each stream opened: its label (`200 data`, `200 RATE_LIMITED`, `200 OVERLOADED`). */
  live?: RequestAttackReport;
  /** Answers to attacks that were not a well-formed GraphQL response, or a 5xx (at most 100 kept). */
  malformed: string[];
}

export interface RunningAttacks {
  /** The counts so far (for progress lines). */
  snapshot(): AttacksReport;
  /** Stops sending, closes every connection, and waits for the answers in flight (once: later calls get the same report). */
  stop(): Promise<AttacksReport>;
}

interface RequestAttack {
  counts: Map<string, number>;
  sent: number;
  /** The n-th request's headers and body. */
  request(n: number): { authorization: string | null; body: string; headers?: Record<string, string> };
}

/** A query as yoga reads `application/graphql, application/json` (its first entry), asking for SSE. */
const DISGUISED_HEADERS = { 'content-type': 'application/graphql, application/json', accept: 'text/event-stream' };
/** A hash alone, asking for SSE: the HTTP layer cannot tell what it is. */
const HASH_ONLY_HEADERS = { 'content-type': 'application/json', accept: 'text/event-stream' };

/** An answer that may be an event stream: its first result is what is read. */
export function readStreamedAnswer(status: number, contentType: string | undefined, text: string): ReadAnswer {
  if (!contentType?.startsWith('text/event-stream')) return readAnswer(status, text);
  const data = /^data: (.*)$/m.exec(text)?.[1];
  return data === undefined ? { label: `${status} no event`, body: null, wellFormed: false } : readAnswer(status, data);
}

export function startAttacks(gatewayUrl: string, options: AttackOptions): RunningAttacks {
  const kinds = new Set(options.kinds);
  let stopping = false;
  const malformed: string[] = [];
  const client = new Pool(gatewayUrl, {
    connections: options.senders * 3,
    headersTimeout: options.answerTimeoutMs,
    bodyTimeout: options.answerTimeoutMs,
  });

  const requestAttacks = new Map<'chain' | 'documents' | 'apq' | 'disguised', RequestAttack>();
  const attack = (request: RequestAttack['request']): RequestAttack => ({ counts: new Map(), sent: 0, request });
  // Each chain differs by its operation name only, so the gateway's caches of parsed and validated
  // documents never answer for it: every one is parsed and checked.
  if (kinds.has('chain')) {
    const chain = (n: number) => ({ query: fragmentChain(options.chainDepth, `Q${n}`) });
    requestAttacks.set(
      'chain',
      attack((n) => ({ authorization: n % 2 === 0 ? null : OWNER_KEY, body: JSON.stringify(chain(n)) })),
    );
  }
  if (kinds.has('documents')) {
    requestAttacks.set(
      'documents',
      attack((n) => ({ authorization: null, body: JSON.stringify({ query: uniqueDocument(n) }) })),
    );
  }
  if (kinds.has('apq')) {
    requestAttacks.set(
      'apq',
      attack((n) => ({ authorization: n % 2 === 0 ? null : FOREIGN_KEY, body: JSON.stringify(apqRegistration(n)) })),
    );
  }

  if (kinds.has('disguised')) {
    requestAttacks.set(
      'disguised',
      attack((n) =>
        n % 2 === 0
          ? { authorization: null, body: `query Disguised${n} { website(id: "1") { id } }`, headers: DISGUISED_HEADERS }
          : {
              authorization: null,
              body: JSON.stringify({
                extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(`${n}`).digest('hex') } },
              }),
              headers: HASH_ONLY_HEADERS,
            },
      ),
    );
  }

  const senders: Promise<void>[] = [];
  for (const [name, state] of requestAttacks) {
    for (let i = 0; i < options.senders; i++) {
      senders.push(
        (async () => {
          while (!stopping) {
            const { authorization, body, headers } = state.request(state.sent++);
            let label: string;
            try {
              const response = await client.request({
                path: '/graphql',
                method: 'POST',
                headers: { 'content-type': 'application/json', ...headers, ...(authorization === null ? {} : { authorization }) },
                body,
              });
              const text = await response.body.text();
              const contentType = response.headers['content-type'];
              const answer = readStreamedAnswer(response.statusCode, typeof contentType === 'string' ? contentType : undefined, text);
              label = answer.label;
              if (!answer.wellFormed && malformed.length < 100) malformed.push(`${name}: ${response.statusCode}: ${text.slice(0, 80)}`);
            } catch (error) {
              label = `no answer: ${errorCode(error)}`;
              if (malformed.length < 100) malformed.push(`${name}: ${label}`);
            }
            state.counts.set(label, (state.counts.get(label) ?? 0) + 1);
          }
        })(),
      );
    }
  }

  const trickle = kinds.has('trickle') ? startTrickle(new URL(gatewayUrl), options) : null;
  const stalled = kinds.has('stalled') ? startStalled(new URL(gatewayUrl), options.stalledConnections) : null;
  const live = kinds.has('live') ? startLiveChurn(gatewayUrl, options.liveStreams, malformed) : null;

  const snapshot = (): AttacksReport => {
    const report: AttacksReport = { malformed: [...malformed] };
    for (const [name, state] of requestAttacks) report[name] = { sent: state.sent, answers: Object.fromEntries(state.counts) };
    if (trickle) report.trickle = trickle.report();
    if (stalled) report.stalled = stalled.report();
    if (live) report.live = live.report();
    return report;
  };

  let stopped: Promise<AttacksReport> | null = null;
  return {
    snapshot,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        trickle?.stop();
        stalled?.stop();
        await Promise.all([...senders, live?.stop()]);
        await client.close();
        return snapshot();
      })();
      return stopped;
    },
  };
}

/** What undici or node:net calls a failure (`UND_ERR_HEADERS_TIMEOUT`, `ECONNRESET`). */
export function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.name : 'unknown';
}

interface Trickle {
  report(): TrickleReport;
  stop(): void;
}

/** What drives one connection of an attack: it writes, sets timers (`later`; cleared when the connection ends), tells. */
interface Driver {
  later(run: () => void, ms: number): void;
  /** Bytes written. */
  sent(bytes: number): void;
  /** The status line the gateway answered with, when the driver reads it. */
  answered(status: string): void;
}

/**
 * Slowloris on the body: each connection sends a POST's headers with a Content-Length, then the body
 * a byte at a time. A connection the gateway ends is opened again, so the pressure stays constant.
 */
function startTrickle(url: URL, options: AttackOptions): Trickle {
  // A real request padded with JSON whitespace: complete, it would be answered like any other.
  const body = Buffer.from(JSON.stringify({ query: '{ __typename }' }).padEnd(1_024, ' '));
  const head =
    `POST /graphql HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
    `Accept: application/graphql-response+json, application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  return startConnections(url, options.trickleConnections, (socket, driver) => {
    let sent = 0;
    const sendNextByte = (): void => {
      if (socket.destroyed || sent >= body.length) return;
      socket.write(body.subarray(sent, sent + 1));
      sent++;
      driver.sent(1);
      const { min, max } = options.trickleByteEveryMs;
      driver.later(sendNextByte, min + Math.random() * (max - min));
    };
    socket.setNoDelay(true);
    socket.once('connect', () => {
      socket.write(head);
      sendNextByte();
    });
    socket.on('data', (chunk: Buffer) =>
      driver.answered(/^HTTP\/1\.[01] (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'unreadable answer'),
    );
  });
}

/**
 * Readers that stop reading: each connection asks for GraphiQL's page uncompressed (about 9 MB) and never
 * reads a byte of it. Paused, a socket cannot see the gateway end it: a CRLF written every second (a
 * server ignores blank lines between requests) meets the closed connection and says so.
 */
function startStalled(url: URL, connections: number): Trickle {
  const request = `GET /graphql HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/html\r\n\r\n`;
  return startConnections(url, connections, (socket, driver) => {
    socket.pause();
    const poke = (): void => {
      if (socket.destroyed) return;
      socket.write('\r\n');
      driver.sent(2);
      driver.later(poke, 1_000);
    };
    socket.once('connect', () => {
      socket.write(request);
      driver.sent(request.length);
      driver.later(poke, 1_000);
    });
  });
}

/** `connections` connections, each driven by `drive`; one the gateway ends is opened again. */
function startConnections(url: URL, connections: number, drive: (socket: Socket, driver: Driver) => void): Trickle {
  const live = new Map<Socket, { openedAt: number; timer: NodeJS.Timeout | undefined }>();
  const closes = new Map<string, number>();
  const lifetimes: number[] = [];
  let opened = 0;
  let bytesSent = 0;
  let stopped: TrickleReport | null = null;

  const open = (): void => {
    if (stopped) return;
    opened++;
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const state = { openedAt: performance.now(), timer: undefined as NodeJS.Timeout | undefined };
    live.set(socket, state);
    let status: string | null = null;
    let failure: string | null = null;
    drive(socket, {
      later: (run, ms) => {
        state.timer = setTimeout(run, ms);
      },
      sent: (bytes) => {
        bytesSent += bytes;
      },
      answered: (answer) => {
        status ??= answer;
      },
    });
    socket.on('error', (error) => {
      failure = errorCode(error);
    });
    socket.once('close', () => {
      clearTimeout(state.timer);
      live.delete(socket);
      if (stopped) return; // ended by us, counted as open at the stop
      const how = status ?? (failure === 'ECONNRESET' || failure === 'EPIPE' ? 'reset' : (failure ?? 'closed'));
      closes.set(how, (closes.get(how) ?? 0) + 1);
      lifetimes.push((performance.now() - state.openedAt) / 1_000);
      // A short pause: a gateway that refuses connections outright must not make this a busy loop.
      setTimeout(open, 100);
    });
  };
  for (let i = 0; i < connections; i++) open();

  const report = (): TrickleReport => {
    if (stopped) return stopped;
    const now = performance.now();
    const oldest = Math.max(0, ...[...live.values()].map(({ openedAt }) => (now - openedAt) / 1_000));
    return {
      opened,
      bytesSent,
      closes: Object.fromEntries(closes),
      lifetimeS: distribution(lifetimes),
      open: live.size,
      oldestOpenS: Math.round(oldest * 10) / 10,
    };
  };

  return {
    report,
    stop() {
      stopped = report();
      for (const [socket, { timer }] of live) {
        clearTimeout(timer);
        socket.destroy();
      }
      live.clear();
    },
  };
}

/**
 * One key's streams, churned: every half second (or once they had their first event) `streams` subscriptions are closed and as many opened on
 * new documents, each under another spelling of the key (forty: the scheme's case, one to ten spaces),
 * asking for `*\/*` (as curl does). Each stream's first event is counted: its data, or why not.
 */
function startLiveChurn(
  gatewayUrl: string,
  streams: number,
  malformed: string[],
): { report(): RequestAttackReport; stop(): Promise<void> } {
  const token = OWNER_KEY.slice('Bearer '.length);
  const spellings = ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) =>
    Array.from({ length: 10 }, (_, n) => `${scheme}${' '.repeat(n + 1)}${token}`),
  );
  const client = new Pool(gatewayUrl, { connections: streams * 2 });
  const counts = new Map<string, number>();
  let sent = 0;
  let stopping = false;
  /** Resolves once the stream's first event is read (or it failed); the stream stays open until `signal` aborts. */
  const subscribe = async (n: number, signal: AbortSignal, firstEvent: () => void): Promise<void> => {
    let label: string;
    try {
      const response = await client.request({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: '*/*', authorization: spellings[n % spellings.length] as string },
        body: JSON.stringify({ query: `subscription Churn${n} { doc${n}: website(id: "1") { id } }` }),
        signal,
      });
      let text = '';
      for await (const chunk of response.body) {
        text += String(chunk);
        if (/^data: .*$/m.test(text)) break;
      }
      const contentType = response.headers['content-type'];
      const answer = readStreamedAnswer(response.statusCode, typeof contentType === 'string' ? contentType : undefined, text);
      label = answer.label;
      if (!answer.wellFormed && malformed.length < 100) malformed.push(`live: ${response.statusCode}: ${text.slice(0, 80)}`);
      counts.set(label, (counts.get(label) ?? 0) + 1);
      firstEvent();
      // Open until the round ends: the gateway closes it then.
      await new Promise((resolve) => (signal.aborted ? resolve(null) : signal.addEventListener('abort', resolve, { once: true })));
      response.body.destroy();
      return;
    } catch (error) {
      label = signal.aborted ? 'closed before its first event' : `no answer: ${errorCode(error)}`;
      if (!signal.aborted && malformed.length < 100) malformed.push(`live: ${label}`);
    }
    counts.set(label, (counts.get(label) ?? 0) + 1);
    firstEvent();
  };
  const rounds = (async () => {
    while (!stopping) {
      // A round lasts half a second, or until every stream had its first event (three seconds at most).
      const round = new AbortController();
      const firstEvents: Promise<void>[] = [];
      const opened = Array.from({ length: streams }, () => {
        let told = (): void => undefined;
        firstEvents.push(new Promise<void>((resolve) => (told = resolve)));
        return subscribe(sent++, round.signal, () => told());
      });
      await Promise.all([
        new Promise((resolve) => setTimeout(resolve, 500)),
        Promise.race([Promise.all(firstEvents), new Promise((resolve) => setTimeout(resolve, 3_000))]),
      ]);
      round.abort();
      await Promise.all(opened);
    }
  })();
  return {
    report: () => ({ sent, answers: Object.fromEntries(counts) }),
    async stop() {
      stopping = true;
      await rounds;
      await client.close();
    },
  };
}
