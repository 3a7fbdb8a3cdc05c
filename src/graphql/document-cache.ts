// yoga's cache of parsed documents, bounded by their memory, not their number: yoga's default keeps
// 1,024 whatever their size, so large distinct documents could fill the heap. A parsed document keeps
// every token (comments included) as an object, and its source twice; the estimate errs on the high side.
import { TokenKind, type DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { HEAP_BYTES, integer } from '../settings.js';

const BYTES_PER_TOKEN = 600;
const BYTES_PER_COMMENT = 120;
const BYTES_PER_ERROR = 2048;

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

/** As yoga's own cache. */
const LIFETIME_MS = 3_600_000;

export const DOCUMENT_CACHE_SETTINGS = {
  documentCacheMaxBytes: integer('DOCUMENT_CACHE_MAX_BYTES', {
    ...HEAP_BYTES,
    fallback: 16 * 1024 * 1024,
    doc: 'parsed documents kept for reuse (with their validation), bounded by their estimated heap',
  }),
};

/** Parse errors get a quarter of the bytes; a document larger than its bound is parsed each time. */
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
