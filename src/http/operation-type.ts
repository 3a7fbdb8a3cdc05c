// Which kind of operation a request runs, read before it is admitted, and whether it will be answered
// as an event stream: one rule for the HTTP layer and yoga. A subscription yoga will stream takes a
// LIVE_MAX_STREAMS place; every other request a MAX_ACTIVE_REQUESTS slot, whatever its Content-Type and
// Accept say (a query asking for text/event-stream is still a query: it waits in line). The body is read
// as yoga reads it (its parser for the Content-Type, the first entry of a list), so no Content-Type makes
// a query look like a subscription. Only the document's tokens are read (graphql's lexer, comments and
// strings skipped), not the whole parse: yoga parses the document again anyway, with its cache; the
// operations of a recent document are remembered (up to 512 K characters of documents), not lexed again. A
// request that carries no document (an APQ hash, a persisted document's id) waits in line as any; if
// yoga finds a subscription there, it moves to a stream's place then (use-work.ts).
import type { IncomingMessage } from 'node:http';
import { Lexer, Source, TokenKind } from 'graphql';
import type { OperationType } from '../graphql/request-state.js';

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
  if (operations === null) return null;
  if (operationName) return operations.find((operation) => operation.name === operationName)?.type ?? null;
  return operations.length === 1 ? (operations[0]?.type ?? null) : null;
}

type Operations = readonly { type: OperationType; name: string | null }[];

/** Documents of up to this many characters are remembered with their operations, up to REMEMBERED_CHARS in all. */
const REMEMBERED_DOCUMENT_CHARS = 16 * 1024;
const REMEMBERED_CHARS = 512 * 1024;
/** The operations of recent documents (null: not GraphQL): a repeated document is not lexed again. Emptied when full. */
const remembered = new Map<string, Operations | null>();
let rememberedChars = 0;

function operationsIn(document: string): Operations | null {
  const known = remembered.get(document);
  if (known !== undefined) return known;
  const operations = lexOperations(document);
  if (document.length <= REMEMBERED_DOCUMENT_CHARS) {
    if (rememberedChars + document.length > REMEMBERED_CHARS) {
      remembered.clear();
      rememberedChars = 0;
    }
    remembered.set(document, operations);
    rememberedChars += document.length;
  }
  return operations;
}

/** The document's operations with their types and names, read from its tokens; null when it does not lex. */
function lexOperations(document: string): Operations | null {
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
        if (depth < 0) return null;
        // A definition ends with its selection set.
        if (depth === 0 && token.kind === TokenKind.BRACE_R) atDefinition = true;
      }
    }
  } catch {
    return null; // not GraphQL: yoga answers the syntax error
  }
  return operations;
}

/**
 * Whether a Content-Type is `expected` as yoga's request parsers tell (isContentTypeMatch): the first entry
 * of a comma-separated list, that type alone or with parameters, as sent (yoga compares case and all).
 */
export function contentTypeIs(contentType: string | undefined, expected: string): boolean {
  const first = contentType?.split(',')[0];
  return first !== undefined && (first === expected || first.startsWith(`${expected};`));
}

/**
 * Hands yoga the JSON body readOperation parsed as `req.body`, in place of its bytes: @whatwg-node/server
 * then answers yoga's request.json() with it, so the body is parsed once, and it does not run Object.keys
 * over every byte of a Uint8Array body (a string per byte). Only a non-empty plain object is handed over
 * (what yoga's JSON parser accepts); any other body keeps its bytes, read and refused by yoga as before.
 * Call it last before yoga: whatever reads the bytes (cache/stored-answers.ts) comes before.
 */
export function handOverParsedBody(req: IncomingMessage & { body?: unknown }, parsedBody: object | undefined): void {
  if (parsedBody !== undefined) req.body = parsedBody;
}

/** What a request's operation is, read before admission, and its JSON body if yoga may take it parsed. */
export interface OperationRead {
  /** The operation's kind; null when the request carries no document, or none yoga would read. */
  type: OperationType | null;
  /** A non-empty plain object parsed from a JSON body (handOverParsedBody). */
  parsedBody?: object;
}

/**
 * The type of the operation a GraphQL request over HTTP runs, from its body (read whole before
 * admission: server.ts) or, for a GET, its query string, read as yoga reads them; null when the request
 * carries no document (an APQ hash, a persisted document's id), or none yoga would read.
 */
export function readOperation(req: IncomingMessage & { body?: Uint8Array }): OperationRead {
  let query: unknown;
  let operationName: unknown;
  let parsedBody: object | undefined;
  if (req.method === 'GET' || req.method === 'HEAD') {
    const params = new URL(req.url ?? '/', 'http://gateway.invalid').searchParams;
    query = params.get('query');
    operationName = params.get('operationName');
  } else if (req.body !== undefined) {
    const { body } = req;
    const contentType = req.headers['content-type'];
    const text = (): string => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    if (contentTypeIs(contentType, 'application/graphql')) query = text();
    else if (contentTypeIs(contentType, 'application/json') || contentTypeIs(contentType, 'application/graphql+json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text());
        ({ query, operationName } = parsed as { query?: unknown; operationName?: unknown });
      } catch {
        return { type: null };
      }
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0) {
        parsedBody = parsed;
      }
    }
  }
  const type = typeof query === 'string' ? operationTypeIn(query, typeof operationName === 'string' ? operationName : null) : null;
  return parsedBody === undefined ? { type } : { type, parsedBody };
}
