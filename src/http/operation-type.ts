// Which kind of operation a request runs, read before admission as yoga reads the body, so no
// Content-Type makes a query look like a subscription. Only the document's tokens are read (yoga parses
// it anyway), and recent documents and JSON bodies are remembered.
import type { IncomingMessage } from 'node:http';
import { Lexer, Source, TokenKind } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { OperationType } from '../request-state.js';

const OPERATION_TYPES = new Set<string>(['query', 'mutation', 'subscription']);
const OPENING = new Set<TokenKind>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L]);
const CLOSING = new Set<TokenKind>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R]);

/** The type of the operation GraphQL would pick; null when none is picked or the text does not lex. */
export function operationTypeIn(document: string, operationName?: string | null): OperationType | null {
  const operations = operationsIn(document);
  if (operationName) return operations.find((operation) => operation.name === operationName)?.type ?? null;
  return operations.length === 1 ? (operations[0]?.type ?? null) : null;
}

type Operations = readonly { type: OperationType; name: string | null }[];

/** What was read of recent texts, within bounds: what strangers send costs a bounded memory. */
const recent = <V extends object>(maxTextChars: number, maxChars: number): LRUCache<string, V> =>
  // lru-cache counts a size of at least 1: an empty text weighs a character.
  new LRUCache<string, V>({ maxSize: maxChars, maxEntrySize: maxTextChars, sizeCalculation: (_reading, text) => Math.max(1, text.length) });

const remembered = recent<Operations>(16 * 1024, 512 * 1024);

function operationsIn(document: string): Operations {
  let operations = remembered.get(document);
  if (operations === undefined) remembered.set(document, (operations = lexOperations(document)));
  return operations;
}

/** The document's operations, read from its tokens; none when it does not lex. */
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

/** As yoga's isContentTypeMatch: the first entry of a list, alone or with parameters, case and all. */
export function contentTypeIs(contentType: string | undefined, expected: string): boolean {
  if (contentType === undefined) return false;
  const comma = contentType.indexOf(',');
  const first = comma === -1 ? contentType : contentType.slice(0, comma);
  return first === expected || (first.startsWith(expected) && first.charCodeAt(expected.length) === SEMICOLON);
}

const SEMICOLON = 0x3b;

interface JsonReading {
  type: OperationType | null;
  handedOver: boolean;
}

const REMEMBERED_BODY_BYTES = 16 * 1024;
const jsonBodies = recent<JsonReading>(REMEMBERED_BODY_BYTES, 512 * 1024);
/** The last JSON body read (a copy of its bytes): its repeat is known by comparing bytes, no text made. */
let lastJson: { bytes: Buffer; reading: JsonReading } | undefined;

/** A non-empty plain object, which yoga may take parsed; undefined for anything else (yoga reads its bytes). */
const plainObject = (parsed: unknown): object | undefined =>
  typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0 ? parsed : undefined;

const typeOf = (query: unknown, operationName: unknown): OperationType | null =>
  typeof query === 'string' ? operationTypeIn(query, typeof operationName === 'string' ? operationName : null) : null;

/** A body readOperation knew without parsing, parsed when something runs its operation. */
export function parsedLater(req: IncomingMessage & { body?: unknown }): object | undefined {
  if (!(req.body instanceof Uint8Array)) return undefined;
  try {
    return plainObject(JSON.parse(textOf(req.body)));
  } catch {
    return undefined;
  }
}

const known = (reading: JsonReading): OperationRead =>
  reading.handedOver ? { type: reading.type, parseLater: true } : { type: reading.type };

function lastJsonOf(body: Uint8Array, reading: JsonReading | undefined): typeof lastJson {
  if (reading === undefined || body.byteLength > REMEMBERED_BODY_BYTES) return undefined;
  const bytes = Buffer.allocUnsafeSlow(body.byteLength);
  bytes.set(body);
  return { bytes, reading };
}

const textOf = (body: Uint8Array): string => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

export interface OperationRead {
  /** null when the request carries no document, or none yoga would read. */
  type: OperationType | null;
  /** Yoga takes it in place of the body's bytes. */
  parsedBody?: object;
  /** Seen lately, known without parsing it (parsedLater). */
  parseLater?: true;
}

function readJson(text: string): OperationRead & JsonReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { type: null, handedOver: false };
  }
  const { query, operationName } = (parsed ?? {}) as { query?: unknown; operationName?: unknown };
  const type = typeOf(query, operationName);
  const parsedBody = plainObject(parsed);
  return parsedBody === undefined ? { type, handedOver: false } : { type, handedOver: true, parsedBody };
}

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
  return { type: typeOf(query, operationName) };
}
