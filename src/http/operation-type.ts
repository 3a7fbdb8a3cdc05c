// Which kind of operation a request runs, read before it is admitted, and whether it will be answered
// as an event stream: one rule for the HTTP layer and yoga. A subscription yoga will stream takes a
// LIVE_MAX_STREAMS place; every other request a MAX_ACTIVE_REQUESTS slot, whatever its Content-Type and
// Accept say (a query asking for text/event-stream is still a query: it waits in line). The body is read
// as yoga reads it (its parser for the Content-Type, the first entry of a list), so no Content-Type makes
// a query look like a subscription. Only the document's tokens are read (graphql's lexer, comments and
// strings skipped), not the whole parse: yoga parses the document again anyway, with its cache; the
// operations of a recent document are remembered (up to 512 K characters of documents), not lexed again,
// and what a recent JSON body says (as many characters again), not parsed again. A
// request that carries no document (an APQ hash, a persisted document's id) waits in line as any; if
// yoga finds a subscription there, it moves to a stream's place then (use-work.ts).
import type { IncomingMessage } from 'node:http';
import { Lexer, Source, TokenKind } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { OperationType } from '../request-state.js';

const OPERATION_TYPES = new Set<string>(['query', 'mutation', 'subscription']);
const OPENING = new Set<TokenKind>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L]);
const CLOSING = new Set<TokenKind>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R]);

/**
 * The type of the operation `operationName` picks in `document` (the only one when no name is given),
 * as GraphQL would pick it; null when there is none to pick, or the text does not lex as GraphQL (yoga
 * then answers the error).
 */
export function operationTypeIn(document: string, operationName?: string | null): OperationType | null {
  const operations = operationsIn(document);
  if (operationName) return operations.find((operation) => operation.name === operationName)?.type ?? null;
  return operations.length === 1 ? (operations[0]?.type ?? null) : null;
}

type Operations = readonly { type: OperationType; name: string | null }[];

/**
 * What was read of recent texts (documents, JSON bodies): a text of up to `maxTextChars` is remembered, up
 * to `maxChars` of them in all, the least recently used out first, so what strangers send costs a bounded
 * memory.
 */
const recent = <V extends object>(maxTextChars: number, maxChars: number): LRUCache<string, V> =>
  // lru-cache counts a size of at least 1: an empty text weighs a character.
  new LRUCache<string, V>({ maxSize: maxChars, maxEntrySize: maxTextChars, sizeCalculation: (_reading, text) => Math.max(1, text.length) });

/** The operations of recent documents: a repeated document is not lexed again. */
const remembered = recent<Operations>(16 * 1024, 512 * 1024);

function operationsIn(document: string): Operations {
  let operations = remembered.get(document);
  if (operations === undefined) remembered.set(document, (operations = lexOperations(document)));
  return operations;
}

/** The document's operations with their types and names, read from its tokens; none when it does not lex. */
function lexOperations(document: string): Operations {
  const operations: { type: OperationType; name: string | null }[] = [];
  const lexer = new Lexer(new Source(document));
  let depth = 0;
  // At the first token of a definition: an operation's type, `fragment`, or `{` (a query's shorthand).
  let atDefinition = true;
  // An operation type was read: its name comes next, unless it has none.
  let pending: OperationType | null = null;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (depth === 0) {
        if (pending !== null) {
          operations.push({ type: pending, name: token.kind === TokenKind.NAME ? token.value : null });
          pending = null;
          if (token.kind === TokenKind.NAME) continue;
        }
        if (atDefinition) {
          atDefinition = false;
          if (token.kind === TokenKind.NAME && OPERATION_TYPES.has(token.value)) {
            pending = token.value as OperationType;
            continue;
          }
          if (token.kind === TokenKind.BRACE_L) operations.push({ type: 'query', name: null });
        }
      }
      if (OPENING.has(token.kind)) depth++;
      else if (CLOSING.has(token.kind)) {
        depth--;
        if (depth < 0) return [];
        // A definition ends with its selection set.
        if (depth === 0 && token.kind === TokenKind.BRACE_R) atDefinition = true;
      }
    }
  } catch {
    return []; // not GraphQL: yoga answers the syntax error
  }
  return operations;
}

/**
 * Whether a Content-Type is `expected` as yoga's request parsers tell (isContentTypeMatch): the first entry
 * of a comma-separated list, that type alone or with parameters, as sent (yoga compares case and all).
 */
export function contentTypeIs(contentType: string | undefined, expected: string): boolean {
  if (contentType === undefined) return false;
  const comma = contentType.indexOf(',');
  const first = comma === -1 ? contentType : contentType.slice(0, comma);
  return first === expected || (first.startsWith(expected) && first.charCodeAt(expected.length) === SEMICOLON);
}

const SEMICOLON = 0x3b;

/** What a JSON body says: its operation's kind, and whether yoga may take it parsed (a non-empty plain object). */
interface JsonReading {
  type: OperationType | null;
  handedOver: boolean;
}

/** What recent JSON bodies said: a repeated request (a dashboard reloaded) is not parsed before admission. */
const REMEMBERED_BODY_BYTES = 16 * 1024;
const jsonBodies = recent<JsonReading>(REMEMBERED_BODY_BYTES, 512 * 1024);
/** The last JSON body read (a copy of its bytes) and what it said: its repeat is known by comparing bytes, no text made. */
let lastJson: { bytes: Buffer; reading: JsonReading } | undefined;

/**
 * The JSON body of a request readOperation knew without parsing (a body seen lately), parsed now, for
 * what runs the operation (graphql/known-operations.ts, yoga), if anything does; undefined when it is
 * not a non-empty plain object (its bytes go to yoga, which answers what is wrong with them).
 */
export function parsedLater(req: IncomingMessage & { body?: unknown }): object | undefined {
  if (!(req.body instanceof Uint8Array)) return undefined;
  try {
    const parsed: unknown = JSON.parse(textOf(req.body));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A request whose JSON body said `reading` before: not parsed now, but for yoga if it runs. */
const known = (reading: JsonReading): OperationRead =>
  reading.handedOver ? { type: reading.type, parseLater: true } : { type: reading.type };

/** What lastJson keeps of a body: a copy of its bytes, when what it said is known and it is not too long to remember. */
function lastJsonOf(body: Uint8Array, reading: JsonReading | undefined): typeof lastJson {
  if (reading === undefined || body.byteLength > REMEMBERED_BODY_BYTES) return undefined;
  const bytes = Buffer.allocUnsafeSlow(body.byteLength);
  bytes.set(body);
  return { bytes, reading };
}

const textOf = (body: Uint8Array): string => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

/** What a request's operation is, read before admission, and its JSON body if yoga may take it parsed. */
export interface OperationRead {
  /** The operation's kind; null when the request carries no document, or none yoga would read. */
  type: OperationType | null;
  /** A non-empty plain object parsed from a JSON body: yoga takes it in place of the body's bytes, parsed once. */
  parsedBody?: object;
  /** A JSON body seen lately, known without parsing it: parsed for what runs the operation (parsedLater), if anything does. */
  parseLater?: true;
}

/** The operation in a JSON body, and the body parsed when yoga may take it so. */
function readJson(text: string): OperationRead & JsonReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { type: null, handedOver: false };
  }
  const { query, operationName } = (parsed ?? {}) as { query?: unknown; operationName?: unknown };
  const type = typeof query === 'string' ? operationTypeIn(query, typeof operationName === 'string' ? operationName : null) : null;
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0) {
    return { type, handedOver: true, parsedBody: parsed };
  }
  return { type, handedOver: false };
}

/**
 * The type of the operation a GraphQL request over HTTP runs, from its body (read whole before
 * admission: server.ts) or, for a GET, its query string, read as yoga reads them; null when the request
 * carries no document (an APQ hash, a persisted document's id), or none yoga would read. A JSON body
 * seen lately is known by its text, and not parsed again.
 */
export function readOperation(req: IncomingMessage & { body?: Uint8Array }): OperationRead {
  let query: unknown;
  let operationName: unknown;
  if (req.method === 'GET' || req.method === 'HEAD') {
    const params = new URL(req.url ?? '/', 'http://gateway.invalid').searchParams;
    query = params.get('query');
    operationName = params.get('operationName');
  } else if (req.body !== undefined) {
    const { body } = req;
    const contentType = req.headers['content-type'];
    if (contentTypeIs(contentType, 'application/graphql')) query = textOf(body);
    else if (contentTypeIs(contentType, 'application/json') || contentTypeIs(contentType, 'application/graphql+json')) {
      if (lastJson?.bytes.equals(body) === true) return known(lastJson.reading);
      const text = textOf(body);
      const remembered = jsonBodies.get(text);
      lastJson = lastJsonOf(body, remembered);
      if (remembered !== undefined) return known(remembered);
      const { type, handedOver, parsedBody } = readJson(text);
      jsonBodies.set(text, { type, handedOver });
      lastJson = lastJsonOf(body, { type, handedOver });
      return parsedBody === undefined ? { type } : { type, parsedBody };
    }
  }
  const type = typeof query === 'string' ? operationTypeIn(query, typeof operationName === 'string' ? operationName : null) : null;
  return { type };
}
