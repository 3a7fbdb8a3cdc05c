// yoga's cache of parsed documents (and, keyed by them, of their validation), bounded by what the
// documents cost in memory rather than by their number. yoga's default keeps 1,024 documents whatever
// their size, so a stranger sending large distinct documents could fill the heap
// (docs/performance.md#memory).
//
// What a parsed document costs (graphql 16, with locations, which errors need): every token of the
// source is an object kept in a linked list from the document's location, comments included, and every
// field, name and argument is a node with its own location; the source string is kept twice (as the
// cache's key and by the tokens). The estimate below errs on the high side: a cache bounded by it holds
// no more than its bound.
import { TokenKind, type DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { integer } from '../settings.js';

const BYTES_PER_TOKEN = 600;
const BYTES_PER_COMMENT = 120;
/** An error's object, message and stack-less location, beside its source. */
const BYTES_PER_ERROR = 2048;

/** Estimated heap bytes of a parsed document and its source (the key it is cached under). */
export function documentBytes(source: string, document: DocumentNode): number {
  let bytes = 2 * source.length;
  for (let token = document.loc?.startToken ?? null; token !== null; token = token.next) {
    bytes += token.kind === TokenKind.COMMENT ? BYTES_PER_COMMENT : BYTES_PER_TOKEN;
  }
  return bytes;
}

export interface DocumentCaches {
  documentCache: LRUCache<string, DocumentNode>;
  errorCache: LRUCache<string, object>;
}

/** How long yoga's own cache keeps a document unused; kept as it was. */
const LIFETIME_MS = 3_600_000;

/**
 * The two caches yoga's `parserAndValidationCache` takes: documents within `maxBytes` (validation
 * results hang off them weakly and go with them), parse errors within a quarter of it. A document
 * larger than its cache's bound is parsed every time it comes, and kept by nobody.
 */
/** DOCUMENT_CACHE_MAX_BYTES's default. */
/** DOCUMENT_CACHE_MAX_BYTES: parsed documents kept for reuse, by their estimated heap. */
export const DOCUMENT_CACHE_SETTINGS = {
  documentCacheMaxBytes: integer('DOCUMENT_CACHE_MAX_BYTES', {
    fallback: 16 * 1024 * 1024,
    min: 0,
    max: 16 * 1024 ** 3,
    unit: 'bytes',
    doc: 'parsed documents kept for reuse (with their validation), bounded by their estimated heap',
  }),
};

export function createDocumentCaches(maxBytes: number): DocumentCaches {
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (document, source) => documentBytes(source, document),
      ttl: LIFETIME_MS,
    }),
    errorCache: new LRUCache<string, object>({
      maxSize: Math.max(1, Math.floor(maxBytes / 4)),
      sizeCalculation: (_error, source) => 2 * source.length + BYTES_PER_ERROR,
      ttl: LIFETIME_MS,
    }),
  };
}
