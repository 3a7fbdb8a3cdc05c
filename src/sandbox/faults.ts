// Knob and scripted-fault inputs (checked, since they also arrive over HTTP from other processes)
// and the misbehaving answers the scripted faults produce: broken ones, and real ones with a lie in them.
import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { paginatorButtons } from './pagination.js';
import type { SandboxKnobs, ScriptedFault } from './types.js';

type BrokenAnswer = Extract<ScriptedFault, { kind: 'afterHandling' }>['answer'];
/** Faults whose request is handled normally: its answer is then delayed, broken or misreported. */
export type HandledFault = Extract<ScriptedFault, { kind: 'delay' | 'afterHandling' | 'pageCount' | 'noPaging' | 'websiteId' }>;
/** Faults that change what an answer says (a lie, or less), its status and the rest of it real. */
export type Misreport = Extract<ScriptedFault, { kind: 'pageCount' | 'noPaging' | 'websiteId' }>;

const HANDLED_KINDS: ReadonlySet<ScriptedFault['kind']> = new Set(['delay', 'afterHandling', 'pageCount', 'noPaging', 'websiteId']);
export const isMisreport = (fault: ScriptedFault): fault is Misreport =>
  fault.kind === 'pageCount' || fault.kind === 'noPaging' || fault.kind === 'websiteId';
export const isHandled = (fault: ScriptedFault): fault is HandledFault => HANDLED_KINDS.has(fault.kind);

export const DEFAULT_KNOBS: SandboxKnobs = { latencyMs: 0, jitterMs: 0, faultRate: 0, rateLimit: null };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonNegative = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Checks a partial knobs object; throws a TypeError naming the first bad field. */
export function parseKnobs(value: unknown): Partial<SandboxKnobs> {
  if (!isRecord(value)) throw new TypeError('knobs must be an object');
  const knobs: Partial<SandboxKnobs> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    switch (key) {
      case 'latencyMs':
      case 'jitterMs':
        if (!isNonNegative(field)) throw new TypeError(`${key} must be a number >= 0`);
        knobs[key] = field;
        break;
      case 'faultRate':
        if (!isNonNegative(field) || field > 1) throw new TypeError('faultRate must be a number between 0 and 1');
        knobs.faultRate = field;
        break;
      case 'rateLimit':
        knobs.rateLimit = parseRateLimit(field);
        break;
      default:
        throw new TypeError(`unknown knob ${JSON.stringify(key)}`);
    }
  }
  return knobs;
}

function parseRateLimit(value: unknown): SandboxKnobs['rateLimit'] {
  if (value === null) return null;
  if (!isRecord(value)) throw new TypeError('rateLimit must be null or { limit, windowMs }');
  const { limit, windowMs } = value;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new TypeError('rateLimit.limit must be an integer >= 1');
  }
  if (!isNonNegative(windowMs) || windowMs === 0) throw new TypeError('rateLimit.windowMs must be a number > 0');
  return { limit, windowMs };
}

const MAX_OVERSIZE_BYTES = 256 * 1024 * 1024;
const BROKEN_ANSWERS: readonly BrokenAnswer[] = ['malformed', 'truncated', 'reset'];
const isPositiveInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

/** Checks a list of scripted faults; throws a TypeError naming the first bad one. */
export function parseScriptedFaults(value: unknown): ScriptedFault[] {
  if (!Array.isArray(value)) throw new TypeError('faults must be an array');
  return value.map((fault: unknown, index): ScriptedFault => {
    const where = `faults[${index}]`;
    if (!isRecord(fault)) throw new TypeError(`${where} must be an object`);
    switch (fault.kind) {
      case 'status': {
        const { status, body, headers } = fault;
        if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
          throw new TypeError(`${where}.status must be an integer between 200 and 599`);
        }
        if (body !== undefined && typeof body !== 'string') throw new TypeError(`${where}.body must be a string`);
        if (headers !== undefined && (!isRecord(headers) || !Object.values(headers).every((h) => typeof h === 'string'))) {
          throw new TypeError(`${where}.headers must map names to strings`);
        }
        return { kind: 'status', status, body, headers: headers as Record<string, string> | undefined };
      }
      case 'html500':
      case 'hang':
      case 'reset':
      case 'truncated':
      case 'malformed':
      case 'noPaging':
        return { kind: fault.kind };
      case 'oversize':
        if (!isNonNegative(fault.bytes) || !Number.isInteger(fault.bytes) || fault.bytes > MAX_OVERSIZE_BYTES) {
          throw new TypeError(`${where}.bytes must be an integer between 0 and ${MAX_OVERSIZE_BYTES}`);
        }
        return { kind: 'oversize', bytes: fault.bytes };
      case 'delay':
        if (!isNonNegative(fault.ms)) throw new TypeError(`${where}.ms must be a number >= 0`);
        return { kind: 'delay', ms: fault.ms };
      case 'afterHandling': {
        const answer = BROKEN_ANSWERS.find((known) => known === fault.answer);
        if (answer === undefined) throw new TypeError(`${where}.answer must be one of ${BROKEN_ANSWERS.join(', ')}`);
        return { kind: 'afterHandling', answer };
      }
      case 'pageCount':
        if (!isPositiveInteger(fault.lastPage)) throw new TypeError(`${where}.lastPage must be an integer >= 1`);
        return { kind: 'pageCount', lastPage: fault.lastPage };
      case 'websiteId':
        if (!isPositiveInteger(fault.id)) throw new TypeError(`${where}.id must be an integer >= 1`);
        return { kind: 'websiteId', id: fault.id };
      default:
        throw new TypeError(
          `${where}.kind must be one of status, html500, hang, reset, truncated, malformed, oversize, delay, afterHandling, pageCount, noPaging, websiteId`,
        );
    }
  });
}

const JSON_TYPE = 'application/json';

export const HTML_500 =
  '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Server Error</title></head>\n' +
  '<body><div class="code">500</div><div class="message">Server Error</div></body>\n</html>\n';

/** What a cut-off answer starts as: a plausible one-website list. */
const SAMPLE_BODY = JSON.stringify({
  data: [
    {
      id: 1,
      domain: 'example.com',
      privacy: 0,
      email: 0,
      password: false,
      exclude_bots: 1,
      exclude_params: null,
      exclude_ips: null,
      favorite: 0,
      created_at: '2024-05-01T10:00:00.000000Z',
      updated_at: '2024-05-01T10:00:00.000000Z',
    },
  ],
  links: { first: null, last: null, prev: null, next: null },
  meta: { current_page: 1, from: 1, last_page: 1, path: null, per_page: 10, to: 1, total: 1 },
  status: 200,
});

export function writeHtml500(res: ServerResponse): void {
  send(res, 500, { 'content-type': 'text/html; charset=UTF-8' }, HTML_500);
}

export function writeUnavailable(res: ServerResponse): void {
  send(res, 503, { 'content-type': JSON_TYPE }, JSON.stringify({ message: 'Service Unavailable' }));
}

/** Answers (or deliberately fails to answer) with a scripted fault; those of handled requests are the caller's. */
export function writeFault(res: ServerResponse, fault: Exclude<ScriptedFault, HandledFault>): void {
  switch (fault.kind) {
    case 'status': {
      const body =
        fault.body ?? JSON.stringify({ message: fault.status === 429 ? 'Too Many Attempts.' : (STATUS_CODES[fault.status] ?? 'Error') });
      const headers = { 'content-type': looksLikeJson(body) ? JSON_TYPE : 'text/plain; charset=UTF-8', ...lowerCased(fault.headers ?? {}) };
      send(res, fault.status, headers, body);
      return;
    }
    case 'html500':
      writeHtml500(res);
      return;
    case 'hang':
      return;
    case 'reset':
      writeHalfThenReset(res, 200, { 'content-type': JSON_TYPE }, SAMPLE_BODY);
      return;
    case 'truncated':
      send(res, 200, { 'content-type': JSON_TYPE }, cutShort(SAMPLE_BODY));
      return;
    case 'malformed':
      send(res, 200, { 'content-type': JSON_TYPE }, NOT_JSON);
      return;
    case 'oversize': {
      const envelope = '{"data":[],"status":200,"padding":""}';
      const padding = Math.max(0, fault.bytes - envelope.length);
      const body = Buffer.concat([Buffer.from(envelope.slice(0, -2)), Buffer.alloc(padding, 'x'), Buffer.from('"}')]);
      send(res, 200, { 'content-type': JSON_TYPE }, body);
      return;
    }
  }
}

/**
 * The real answer of a request that was handled (a write applied), broken on its way out: its
 * body replaced by something that is not JSON, cut short, or dropped mid-body. Status and headers
 * are the real ones.
 */
export function writeBrokenAnswer(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
  answer: BrokenAnswer,
): void {
  switch (answer) {
    case 'malformed':
      send(res, status, headers, NOT_JSON);
      return;
    case 'truncated':
      send(res, status, headers, cutShort(body));
      return;
    case 'reset':
      writeHalfThenReset(res, status, headers, body);
      return;
  }
}

/** The real answer `body` (a JSON value) as a misreporting fault changes it. */
export function misreported(body: unknown, fault: Misreport): unknown {
  switch (fault.kind) {
    case 'pageCount':
      return claimingPages(body, fault.lastPage);
    case 'noPaging':
      return isRecord(body) && Array.isArray(body.data) ? { data: body.data } : body;
    case 'websiteId':
      return namingWebsite(body, fault.id);
  }
}

/**
 * A page of either envelope as if the list had `lastPage` full pages: the resource collection's
 * `meta` and `links`, or the plain paginator's numbers, URLs and buttons. Anything else is unchanged.
 */
function claimingPages(body: unknown, lastPage: number): unknown {
  if (!isRecord(body) || !Array.isArray(body.data)) return body;
  const meta = isRecord(body.meta) ? body.meta : undefined;
  const paging = meta ?? body;
  const { current_page: page, path } = paging;
  const perPage = Number(paging.per_page); // a string in the plain paginator
  if (typeof page !== 'number' || typeof path !== 'string' || !Number.isInteger(perPage)) return body;
  const url = (n: number): string => `${path}?page=${n}`;
  const next = page < lastPage ? url(page + 1) : null;
  const claimed = { last_page: lastPage, total: lastPage * perPage };
  if (meta !== undefined) {
    return { ...body, links: { ...(isRecord(body.links) ? body.links : {}), last: url(lastPage), next }, meta: { ...meta, ...claimed } };
  }
  return { ...body, ...claimed, last_page_url: url(lastPage), next_page_url: next, links: paginatorButtons(page, lastPage, url) };
}

/** An answer naming one website (a show, create or update under `data`; a delete at the top) names `id`. */
function namingWebsite(body: unknown, id: number): unknown {
  if (!isRecord(body)) return body;
  if (isRecord(body.data) && body.data.id !== undefined) return { ...body, data: { ...body.data, id } };
  if (body.deleted !== undefined && body.id !== undefined) return { ...body, id };
  return body;
}

const NOT_JSON = '<html><body><h1>Welcome to nginx!</h1></body></html>';

/** The first 60% of a body (at least one character short of it), for a close that looks correct. */
function cutShort(body: string): string {
  return body.slice(0, Math.min(Math.floor(body.length * 0.6), Math.max(0, body.length - 1)));
}

/** Promises the whole body, sends half, then drops the connection once the half is on the wire. */
function writeHalfThenReset(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.write(body.slice(0, Math.floor(body.length / 2)), () => res.destroy());
}

export function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
