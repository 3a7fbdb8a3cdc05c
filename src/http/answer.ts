// The one ending. However a request was answered (a stored answer, a known operation's compiled path,
// yoga: a result, a refusal, the GraphiQL page, an event stream), the answer leaves through here: the
// paths decide what to answer and hand over an Answer, plain data; this module writes the status and the
// headers (security, CORS, Vary, Cache-Control, the ETag or a 304), frees the request's slot, keeps the
// answer when it may be kept, counts it and writes its log line. A header, a log field or a caching
// rule is changed here, once, for every path.
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { StoredAnswer, StoredHit } from '../cache/stored-answers.js';
import { RequestTrace, withStoredTrace } from '../upstream/request-trace.js';
import { sendNodeResponse } from '@whatwg-node/server';
import type { StoreSession } from '../cache/scope.js';
import { SECURITY_HEADERS, htmlPolicy, ifNoneMatchHas } from '../http-headers.js';
import type { Answer, AnswerFacts, AnswerUsage, JsonAnswer, PassedAnswer } from '../graphql/answered.js';
import type { RequestState } from '../request-state.js';

/** Where an answer is counted: the metrics. */
export interface AnswerCounter {
  answered(facts: AnswerFacts, seconds: number, stored: boolean): void;
}

/** A request log line's figures: all but the operation's name. */
export interface RequestLogFields {
  durationMs: number;
  upstreamCalls: number;
  cost: number | null;
  cache: { hits: number; misses: number; stale: number };
  outcome: 'ok' | 'error';
  errorCodes?: string[] | undefined;
  /** Sent from its stored answer (cache/stored-answers.ts), before GraphQL ran. */
  storedAnswer?: true | undefined;
  /** The request's OpenTelemetry trace id, when tracing is on. */
  trace_id?: string | undefined;
  /** The MCP tool whose call ran it (mcp/server.ts). */
  tool?: string | undefined;
}

/** Where request lines go: the gateway's RequestLog, a test's array. */
export interface RequestLogWriter {
  write(operation: string | null, fields: RequestLogFields): void;
}

export interface EndingOptions {
  /** The CORS headers of an answer to a request from `origin` (none when it is not allowed). */
  cors: (origin: string) => readonly string[];
  /** The ETags' secret: the cache's (the gateways on a Redis agree), or this process's. */
  etagSecret: () => string;
  /** Where answers are kept (cache/stored-answers.ts); none with CACHE=off. */
  keep?: (session: StoreSession, answer: StoredAnswer, freshForMs: number) => Promise<void>;
  /** MAX_COST, in a stored answer's extensions. */
  costLimit: number;
  counter?: AnswerCounter;
  log?: RequestLogWriter;
  /** The OpenTelemetry span of a stored answer (tracing on): its trace id. */
  traceStored?: (req: IncomingMessage, status: number, startedAt: number) => string;
}

export interface Ending {
  /** Sends the answer to the client, then settles it. */
  finish(req: IncomingMessage, res: ServerResponse, state: RequestState, answer: Answer): void;
  /**
   * Everything but the sending: frees the slot, keeps the answer when it may, counts it and writes its
   * line. For an answer that is not sent as it is (a live poll's, an MCP tool's result).
   */
  settle(req: IncomingMessage | null, state: RequestState, answer: JsonAnswer): void;
}

/** The ETag of an answer's data (as JSON) under a key: keyed by the gateways' secret, weak. */
export function etagOf(secret: string, key: string, dataJson: string): string {
  const tag = createHmac('sha256', secret).update(`${key}\n`).update(dataJson).digest('base64url');
  return `W/"${tag.slice(0, 27)}"`;
}

/** The usage figures of `extensions`, as a repeat of the same query gives them when every read is a hit. */
export function repeatedFigures(usage: AnswerUsage, costLimit: number): string {
  const { cache } = usage;
  return JSON.stringify({
    cost: { requested: usage.cost ?? 0, limit: costLimit },
    upstreamCalls: 0,
    cache: { hits: cache.hits + cache.misses, misses: 0, stale: 0 },
  });
}

const isJson = (answer: Answer): answer is JsonAnswer => 'facts' in answer && 'body' in answer;

/** A content type whose body goes on after its head is out: the request's work, not a finished answer. */
const STREAMED = /^(?:text\/event-stream|multipart\/mixed)/;

/** Origins whose CORS headers are kept made: a frontend's are few; a client making up more evicts the oldest. */
const MAX_ORIGINS = 64;

/** An HTML page that names no script of its own (the GraphiQL page names its one): it runs none. */
const HTML_POLICY = htmlPolicy([]);

export function createEnding(options: EndingOptions): Ending {
  const { log, counter, keep } = options;
  const origins = new LRUCache<string, readonly string[]>({ max: MAX_ORIGINS, memoMethod: (origin) => options.cors(origin) });
  const corsOf = (origin: string | undefined): readonly string[] => (origin === undefined ? [] : origins.memo(origin));

  function settle(req: IncomingMessage | null, state: RequestState, answer: JsonAnswer, status = answer.status): void {
    const { facts } = answer;
    state.slot?.free(facts.keyAccepted);
    const stored = answer.stored !== undefined;
    if (!stored) keepIfFit(state, answer, status);
    const traceId = stored && req !== null ? options.traceStored?.(req, status, state.receivedAt) : undefined;
    record(facts, state, stored, traceId);
  }

  /** Counts the answer and writes its line. */
  function record(facts: AnswerFacts, state: RequestState, stored: boolean, traceId?: string): void {
    const seconds = (performance.now() - state.receivedAt) / 1000;
    counter?.answered(facts, seconds, stored);
    if (log === undefined) return;
    const usage = facts.usage;
    const codes = facts.errorCodes;
    log.write(facts.operation, {
      durationMs: Math.round(seconds * 100_000) / 100,
      upstreamCalls: usage?.upstreamCalls ?? 0,
      cost: usage?.cost ?? null,
      cache: { hits: usage?.cache.hits ?? 0, misses: usage?.cache.misses ?? 0, stale: usage?.cache.stale ?? 0 },
      outcome: codes.length === 0 ? 'ok' : 'error',
      errorCodes: codes.length > 0 ? [...new Set(codes)] : undefined, // undefined: left out of the line, as pino does
      storedAnswer: stored ? true : undefined,
      trace_id: traceId ?? facts.traceId,
      tool: state.tool,
    });
  }

  /**
   * Keeps a query's answer, 200 with data and no errors, from fresh reads, as a repeat of it says it: when
   * the request was looked up and not found, and asked for no trace.
   */
  function keepIfFit(state: RequestState, answer: JsonAnswer, status: number): void {
    const session = state.store;
    const usage = answer.facts.usage;
    const freshFor = usage?.cache.freshForS ?? null;
    if (keep === undefined || session?.answerName === undefined || usage === null || answer.data === null || state.traced) return;
    if (status !== 200 || answer.facts.type !== 'query' || freshFor === null || freshFor <= 0 || usage.cache.stale > 0) return;
    const body = `{"data":${answer.data},"extensions":${repeatedFigures(usage, options.costLimit)}}`;
    const { etag } = answer;
    const stored: StoredAnswer = {
      body,
      contentType: answer.contentType,
      ...(etag === undefined ? {} : { etag }),
      operation: answer.facts.documentName ?? null,
      cost: usage.cost,
      reads: usage.cache.hits + usage.cache.misses,
    };
    void keep(session, stored, freshFor * 1000);
  }

  /** The headers every answer carries, but its own: security, CORS for an allowed origin, Vary. */
  function common(req: IncomingMessage, graphql: boolean, vary: string | null = null): string[] {
    const headers: string[] = [];
    for (const name in SECURITY_HEADERS) headers.push(name, SECURITY_HEADERS[name] as string);
    headers.push(...corsOf(req.headers.origin));
    const ours = graphql ? 'Origin, Authorization' : 'Origin';
    headers.push('vary', vary === null || vary === '' ? ours : `${vary}, ${ours}`);
    return headers;
  }

  function finishJson(req: IncomingMessage, res: ServerResponse, state: RequestState, answer: JsonAnswer): void {
    const { facts, stored } = answer;
    const freshFor = stored !== undefined ? stored.maxAgeS : (facts.usage?.cache.freshForS ?? null);
    // A query's answer without errors may be kept by the client for as long as the reads behind it stay
    // fresh; an answer with its trace is this request's alone.
    const cacheable =
      !state.traced &&
      answer.status === 200 &&
      facts.type === 'query' &&
      freshFor !== null &&
      (stored !== undefined || answer.data !== null);
    const headers = common(req, true);
    if (answer.headers !== undefined) headers.push(...answer.headers);
    headers.push('cache-control', cacheable ? `private, max-age=${freshFor}` : 'no-store');
    let status = answer.status;
    if (cacheable && req.method === 'GET') {
      const etag = stored !== undefined ? stored.etag : etagOf(options.etagSecret(), state.key ?? '', answer.data as string);
      if (etag !== undefined) {
        answer.etag = etag;
        headers.push('etag', etag);
        if (ifNoneMatchHas(headerOf(req, 'if-none-match'), etag)) status = 304;
      }
    }
    // A 304 has no body, nor the headers of one.
    const notModified = status === 304;
    if (!notModified)
      headers.push('content-type', `${answer.contentType}; charset=utf-8`, 'content-length', String(byteLength(answer.body)));
    res.writeHead(status, headers);
    settle(req, state, answer, status);
    res.end(notModified ? undefined : answer.body);
  }

  function finishPassed(req: IncomingMessage, res: ServerResponse, state: RequestState, answer: PassedAnswer): void {
    const { response, facts } = answer;
    const ours = common(req, facts !== null, response.headers.get('vary'));
    const type = response.headers.get('content-type') ?? '';
    // Its own headers (a preflight's CORS, the page's caching), then ours that it has not set.
    const headers: string[] = [];
    response.headers.forEach((value, name) => {
      if (name !== 'vary') headers.push(name, value);
    });
    for (let i = 0; i < ours.length; i += 2) {
      const name = ours[i] as string;
      if (name === 'vary' || !response.headers.has(name)) headers.push(name, ours[i + 1] as string);
    }
    if (!response.headers.has('cache-control')) headers.push('cache-control', 'no-store');
    if (type.includes('text/html')) {
      headers.push('x-frame-options', 'DENY');
      if (!response.headers.has('content-security-policy')) headers.push('content-security-policy', HTML_POLICY);
    }
    // An event stream goes out as its events are made: no proxy (nginx) holds it back.
    if (type.startsWith('text/event-stream')) headers.push('x-accel-buffering', 'no');
    // A stream's slot stays taken while it streams (its work goes on); anything else's is free now.
    if (!STREAMED.test(type)) state.slot?.free(facts?.keyAccepted ?? false);
    if (facts !== null) record(facts, state, false);
    if (req.method === 'HEAD') {
      res.writeHead(response.status, headers);
      res.end();
      return;
    }
    // Written as yoga's own node adapter writes a Response (a stream's parts as they come, the reader
    // cancelled when the client fails), with the headers set here.
    // Its own headers are all in `headers` (its Vary joined with ours).
    response.headers.delete('vary');
    for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] as string, headers[i + 1] as string);
    void sendNodeResponse(response, res, req, false);
  }

  return {
    settle: (req, state, answer) => settle(req, state, answer),
    finish(req, res, state, answer) {
      if (res.destroyed) {
        // Its client left: nothing to send; its slot is free all the same.
        state.slot?.free(isJson(answer) ? answer.facts.keyAccepted : (answer.facts?.keyAccepted ?? false));
        if (!isJson(answer)) void answer.response.body?.cancel();
        return;
      }
      if (isJson(answer)) finishJson(req, res, state, answer);
      else finishPassed(req, res, state, answer);
    },
  };
}

const byteLength = (body: string | Uint8Array): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);

/** A header's value as one string (null when absent). */
function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A stored answer as the answer to this request: its extensions as a repeat says them (no call, every
 * read a hit); a traced request's with its own trace (stored, no call).
 */
export function storedAnswerOf(hit: StoredHit, state: RequestState): JsonAnswer {
  const body = state.traced
    ? withStoredTrace(Buffer.from(hit.body).toString('utf8'), new RequestTrace(state.receivedAt, state.admittedAt))
    : hit.body;
  return {
    status: 200,
    contentType: hit.contentType,
    body,
    data: null,
    facts: {
      operation: hit.operation,
      documentName: hit.operation ?? undefined,
      type: 'query',
      errorCodes: [],
      usage: { upstreamCalls: 0, cost: hit.cost, cache: { hits: hit.reads, misses: 0, stale: 0, freshForS: hit.maxAgeS } },
      // Sent only while the key's mark says the upstream accepted it lately.
      keyAccepted: true,
    },
    stored: { etag: hit.etag, maxAgeS: hit.maxAgeS },
  };
}
