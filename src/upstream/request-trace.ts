// One request's own account of its upstream calls: `extensions.trace` of a request that asked for it
// (X-Gateway-Trace: 1, graphql/plugins/use-request-trace.ts). The request's source (source.ts) records each
// call it sends and each read the cache answered without one. Nothing in it is another request's: a read
// that joined another's call says "coalesced" and how long it waited, never that call's status or size.
import { z } from 'zod';
import { type CallObserver, type HttpMethod, type UpstreamRequest, pathWithQuery } from './client.js';
import { CACHE_OUTCOMES, type CacheOutcome } from '../cache/read-cache.js';

/** The most response paths one call names: a list of many rows needs one read for each row's field. */
export const TRACE_FIELDS_PER_CALL = 10;
/** The most bytes of a trace's calls, as JSON: past it they are counted in `cut`, so a trace stays small. */
export const TRACE_MAX_BYTES = 32 * 1024;

const milliseconds = (description: string) => z.number().nonnegative().describe(description);

/** One entry of a trace: a call the request sent, or a read answered without one. */
const TRACE_CALL = z
  .strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).describe('the HTTP method'),
    path: z
      .string()
      .describe(
        'the REST path with its query string as sent (below the install\'s origin), e.g. /api/v1/stats/1?name=url&…; "" when unknown',
      ),
    status: z.number().int().nullable().describe("the install's last answer's status; null: no answer, or no call of this request's"),
    startMs: milliseconds("when it started, in ms from the request's start"),
    durationMs: milliseconds('how long it took (for a read answered without a call: how long the answer took to come)'),
    bytes: z.number().int().nonnegative().nullable().describe("the last answer's body bytes; null: no answer of this request's"),
    retries: z.number().int().nonnegative().describe('attempts after the first (only reads are retried)'),
    cache: z
      .enum(CACHE_OUTCOMES)
      .nullable()
      .describe('what the read cache did: hit, stale, miss, coalesced, written; null: not a read through the cache (a write, a key check)'),
    fields: z
      .array(z.string())
      .describe(`the response paths whose resolvers asked for it, e.g. website.pages: the first ${TRACE_FIELDS_PER_CALL}`),
    moreFields: z.number().int().positive().optional().describe('how many more response paths asked for it, left out of `fields`'),
    note: z.string().optional().describe('why the gateway made a call no field asked for (the key check)'),
  })
  .describe('one upstream call of the request, or a read the cache answered without one');

export const TRACE_SHAPE = z
  .strictObject({
    storedAnswer: z.boolean().describe('answered before GraphQL ran, with the answer stored for the same query: no call, no field ran'),
    calls: z.array(TRACE_CALL).describe('in the order they started'),
    cut: z
      .strictObject({
        calls: z.number().int().nonnegative().describe(`calls left out past the trace's ${TRACE_MAX_BYTES} bytes (the last to start)`),
        fields: z.number().int().nonnegative().describe("response paths left out of the calls' `fields`"),
      })
      .optional()
      .describe('present when the trace was cut to its bounds: what it leaves out (the totals still count every call)'),
    totals: z.strictObject({
      wallMs: milliseconds('from the request handed over (its body read) to its answer'),
      slotWaitMs: milliseconds('waiting in line for a slot (MAX_ACTIVE_REQUESTS)'),
      upstreamMs: milliseconds('time at least one of its calls or cache reads was in flight'),
      gatewayMs: milliseconds("the gateway's own work: the wall time less the wait for a slot and for calls and reads"),
      upstreamCalls: z.number().int().nonnegative().describe('calls this request sent (retries not counted)'),
      cacheHits: z.number().int().nonnegative().describe('reads answered by the cache or by a call in flight'),
    }),
  })
  .describe('What one request did upstream: extensions.trace, sent for X-Gateway-Trace: 1');

/** The trace of one request, as `extensions.trace` carries it (docs/trace.schema.json). */
export type GatewayTrace = z.infer<typeof TRACE_SHAPE>;
export type TraceCall = z.infer<typeof TRACE_CALL>;

/** A field's response path as graphql's resolvers see it (`info.path`). */
export interface FieldPath {
  readonly prev: FieldPath | undefined;
  readonly key: string | number;
}

/** A read through the cache, and the calls made for it. */
export interface TracedRead {
  readonly id: string;
  readonly calls: CallRecord[];
}

/** What a call or a read looks like on the wire. */
export type CallShape = Pick<UpstreamRequest, 'method' | 'path' | 'query'>;

interface CallRecord {
  method: HttpMethod;
  path: string | null;
  startedAt: number;
  endedAt: number | null;
  status: number | null;
  bytes: number | null;
  attempts: number;
  cache: CacheOutcome | null;
  /** A call this request sent (not a read answered without one). */
  own: boolean;
  readId: string | null;
  note?: string;
}

/** Every upstream path is below it (client.ts adds it to what api.ts names). */
const API_PREFIX = '/api/v1';

const newRecord = (method: HttpMethod, path: string | null, startedAt: number, own: boolean, readId: string | null): CallRecord => ({
  method,
  path,
  startedAt,
  endedAt: null,
  status: null,
  bytes: null,
  attempts: 0,
  cache: null,
  own,
  readId,
});

/** `,"moreFields":` and a count of up to ten digits. */
const MORE_FIELDS_MARK = 24;

const tenths = (ms: number): number => Math.round(Math.max(0, ms) * 10) / 10;

/** pathText(path).length, without making the text. */
function pathLength(path: FieldPath): number {
  let length = -1;
  for (let at: FieldPath | undefined = path; at !== undefined; at = at.prev) length += String(at.key).length + 1;
  return length;
}

function pathText(path: FieldPath): string {
  const keys: (string | number)[] = [];
  for (let at: FieldPath | undefined = path; at !== undefined; at = at.prev) keys.push(at.key);
  return keys.reverse().join('.');
}

export class RequestTrace {
  private slotWaitMs = 0;
  private stored = false;
  private readonly records: CallRecord[] = [];
  /** The fields that asked for each read, by the read's id, in the order they asked (only the first are rendered). */
  private readonly needs = new Map<string, Set<FieldPath>>();

  /** `startedAt`: performance.now() when the request was handed over; `admittedAt`, when it got its slot. */
  constructor(
    readonly startedAt = performance.now(),
    admittedAt = startedAt,
  ) {
    this.slotWaitMs = admittedAt - startedAt;
  }

  /** It was answered with a stored answer, before GraphQL. */
  answeredStored(): void {
    this.stored = true;
  }

  /** The field at `by` asked for the read `readId`. */
  need(readId: string, by: FieldPath | undefined): void {
    if (by === undefined) return;
    const paths = this.needs.get(readId);
    if (paths === undefined) this.needs.set(readId, new Set([by]));
    else paths.add(by);
  }

  /** A call going out now, for `read` (none: a write's or the key check's, which `note` names). */
  call(read: TracedRead | null, request: CallShape, note?: string): CallObserver {
    const path = API_PREFIX + pathWithQuery(request.path, request.query);
    const record = newRecord(request.method, path, performance.now(), true, read?.id ?? null);
    if (note !== undefined) record.note = note;
    this.records.push(record);
    read?.calls.push(record);
    return {
      end(attempts, status, bytes) {
        record.endedAt = performance.now();
        record.attempts = attempts;
        record.status = typeof status === 'number' ? status : null;
        record.bytes = bytes;
      },
    };
  }

  /** A read through the cache: `run` makes it and tells `seen` what the cache did; `describe` gives its call. */
  async read<T>(
    id: string,
    run: (read: TracedRead, seen: (outcome: CacheOutcome) => void) => Promise<T>,
    describe: () => Promise<CallShape | null>,
  ): Promise<T> {
    const read: TracedRead = { id, calls: [] };
    const startedAt = performance.now();
    let outcome: CacheOutcome = 'miss';
    try {
      return await run(read, (seen) => {
        outcome = seen;
      });
    } finally {
      this.settle(read, outcome, startedAt, describe);
    }
  }

  private settle(read: TracedRead, outcome: CacheOutcome, startedAt: number, describe: () => Promise<CallShape | null>): void {
    if (read.calls.length > 0) {
      // What was kept is the answer of the call that succeeded; a refused one before it (a statistic's name) was not.
      for (const call of read.calls) call.cache = outcome === 'written' && (call.status ?? 0) >= 300 ? 'miss' : outcome;
      return;
    }
    if (outcome === 'miss') return; // failed before any call went out (a key not fit to forward)
    const record = newRecord('GET', null, startedAt, false, read.id);
    record.endedAt = performance.now();
    record.cache = outcome;
    this.records.push(record);
    void describe().then((shape) => {
      if (shape === null) return;
      record.method = shape.method;
      record.path = API_PREFIX + pathWithQuery(shape.path, shape.query);
    });
  }

  /** The trace as it stands now: what `extensions.trace` carries. */
  render(): GatewayTrace {
    const now = performance.now();
    const records = [...this.records].sort((a, b) => a.startedAt - b.startedAt);
    // The time covered by at least one call or read, the records taken in the order they started.
    let busy = 0;
    let reach = Number.NEGATIVE_INFINITY;
    for (const record of records) {
      const end = record.endedAt ?? now;
      if (end <= reach) continue;
      busy += end - Math.max(record.startedAt, reach);
      reach = end;
    }
    const wallMs = now - this.startedAt;
    // Calls while they fit in TRACE_MAX_BYTES, then their fields while room is left; the rest counted, not named.
    const calls: TraceCall[] = [];
    let room = TRACE_MAX_BYTES - 2;
    for (const record of records) {
      const entry = this.entry(record, now);
      // Room for a comma, and for the count of fields left out should there be any.
      const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1 + MORE_FIELDS_MARK;
      if (bytes > room) break;
      room -= bytes;
      calls.push(entry);
    }
    let fieldsLeftOut = 0;
    calls.forEach((entry, index) => {
      const record = records[index] as CallRecord;
      const paths = record.readId === null ? undefined : this.needs.get(record.readId);
      if (paths === undefined) return;
      for (const path of paths) {
        // Quoted, and a comma before each but the first: aliases and indexes need no escaping.
        const bytes = pathLength(path) + (entry.fields.length === 0 ? 2 : 3);
        if (entry.fields.length === TRACE_FIELDS_PER_CALL || bytes > room) break;
        room -= bytes;
        entry.fields.push(pathText(path));
      }
      const more = paths.size - entry.fields.length;
      if (more === 0) return;
      entry.moreFields = more;
      fieldsLeftOut += more;
    });
    const callsLeftOut = records.length - calls.length;
    return {
      storedAnswer: this.stored,
      calls,
      ...(callsLeftOut > 0 || fieldsLeftOut > 0 ? { cut: { calls: callsLeftOut, fields: fieldsLeftOut } } : {}),
      totals: {
        wallMs: tenths(wallMs),
        slotWaitMs: tenths(this.slotWaitMs),
        upstreamMs: tenths(busy),
        gatewayMs: tenths(wallMs - this.slotWaitMs - busy),
        upstreamCalls: records.filter((record) => record.own).length,
        cacheHits: records.filter((record) => record.cache === 'hit' || record.cache === 'coalesced').length,
      },
    };
  }

  private entry(record: CallRecord, now: number): TraceCall {
    return {
      method: record.method,
      path: record.path ?? '',
      status: record.status,
      startMs: tenths(record.startedAt - this.startedAt),
      durationMs: tenths((record.endedAt ?? now) - record.startedAt),
      bytes: record.bytes,
      retries: Math.max(0, record.attempts - 1),
      cache: record.cache,
      fields: [],
      ...(record.note === undefined ? {} : { note: record.note }),
    };
  }
}

/** A stored answer's body (cache/stored-answers.ts) with the trace of the request it answers: stored, no call. */
export function withStoredTrace(body: string, trace: RequestTrace): string {
  trace.answeredStored();
  const answer = JSON.parse(body) as { extensions?: Record<string, unknown> };
  answer.extensions = { ...answer.extensions, trace: trace.render() };
  return JSON.stringify(answer);
}
