// Persisted queries, two kinds, one store. Automatic persisted queries (APQ, the protocol of Apollo
// Client's persisted-query link and urql's persistedExchange): a client sends a document's SHA-256
// alone; on PersistedQueryNotFound it sends the document with its hash, which the gateway checks and
// keeps, per process, in a store bounded in entries and bytes (least recently used out first). A
// document is kept only once the request that sent it ran and the upstream accepted its key: a stranger,
// or a key the upstream refuses, can send documents but not fill the store (in memory or in Redis).
// Trusted documents: a manifest of the documents a frontend was built with (GraphQL Code Generator's
// client-preset writes it, `{ "sha256:<hex>": "<document>" }`), run by hash; when configured, no
// other document runs at all.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { ErrorCode } from '../../errors.js';
import { defaultsOf, flag, integer, text } from '../../settings.js';

export interface PersistedQueryOptions {
  /** Most documents APQ keeps (APQ_MAX_ENTRIES; default in PERSISTED_QUERY_DEFAULTS). */
  maxEntries?: number;
  /** Most bytes of documents APQ keeps (APQ_MAX_BYTES; default in PERSISTED_QUERY_DEFAULTS). */
  maxBytes?: number;
  /** Trusted documents by SHA-256 hex (loadPersistedDocuments); default none. */
  manifest?: ReadonlyMap<string, string>;
  /** Refuse every document that is not in the manifest, and register none (default false). */
  trustedOnly?: boolean;
  /** Where registered documents go instead of this process's bounded store (Redis, shared by gateways). */
  registry?: DocumentRegistry;
  /**
   * Whether the upstream accepted the key of the request whose context this is, asked once its operation
   * has run; a registration is kept only then. Default: never (nothing registered).
   */
  keyAccepted?: (context: object) => boolean;
}

/** A shared home for registered documents; failures make a document unknown, never a request fail. */
export interface DocumentRegistry {
  get(hash: string): Promise<string | undefined>;
  set(hash: string, document: string): Promise<void>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Documents by hash, the least recently used out first past either bound; none is kept when a bound is 0
 * (null), nor one larger than the byte bound.
 */
export function boundedDocumentStore(maxEntries: number, maxBytes: number): LRUCache<string, string> | null {
  if (maxEntries === 0 || maxBytes === 0) return null;
  // lru-cache counts a size of at least 1: an empty document weighs a byte.
  return new LRUCache({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (document) => Math.max(1, Buffer.byteLength(document)) });
}

/**
 * Reads a client-preset manifest. Every key must be the SHA-256 of its document (with or without the
 * `sha256:` prefix), so a manifest that does not match its documents is refused at start-up.
 */
export function loadPersistedDocuments(path: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`PERSISTED_DOCUMENTS: cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`PERSISTED_DOCUMENTS: ${path} must hold an object of "sha256:<hash>": "<document>"`);
  }
  const manifest = new Map<string, string>();
  for (const [key, document] of Object.entries(parsed)) {
    const hash = key.replace(/^sha256:/, '');
    if (typeof document !== 'string' || sha256Hex(document) !== hash) {
      throw new Error(`PERSISTED_DOCUMENTS: the entry ${JSON.stringify(key.slice(0, 80))} is not the SHA-256 of its document`);
    }
    manifest.set(hash, document);
  }
  return manifest;
}

/** Automatic persisted queries' bound, and the manifest of trusted documents. */
export const PERSISTED_QUERY_SETTINGS = {
  maxEntries: integer('APQ_MAX_ENTRIES', {
    fallback: 1000,
    min: 0,
    max: 1_000_000,
    unit: 'documents',
    doc: 'automatic persisted queries kept per process, or in Redis for all gateways together',
  }),
  maxBytes: integer('APQ_MAX_BYTES', { fallback: 4 * 1024 * 1024, min: 0, max: 1024 ** 3, unit: 'bytes', doc: 'the same, in bytes' }),
  documentsPath: text('PERSISTED_DOCUMENTS', {
    fallback: null,
    unit: 'file path',
    doc: "path of a trusted-documents manifest (client-preset's persisted-documents.json)",
  }),
  trustedOnly: flag('TRUSTED_DOCUMENTS_ONLY', {
    fallback: false,
    doc: "run only the manifest's documents; every other document is refused (needs PERSISTED_DOCUMENTS)",
  }),
};
const PERSISTED_QUERY_DEFAULTS = defaultsOf(PERSISTED_QUERY_SETTINGS);

/** The `persistedQuery` extension of APQ (version 1, a SHA-256 in hex), or null when there is none. */
function persistedQueryOf(extensions: unknown): { sha256Hash: string } | null {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (persisted?.version !== 1 || typeof persisted.sha256Hash !== 'string') return null;
  return { sha256Hash: persisted.sha256Hash };
}

/** APQ over the manifest and the bounded store; with `trustedOnly`, the guard that refuses other documents. */
export function usePersistedQueries({
  maxEntries = PERSISTED_QUERY_DEFAULTS.maxEntries,
  maxBytes = PERSISTED_QUERY_DEFAULTS.maxBytes,
  manifest = new Map(),
  trustedOnly = false,
  registry,
  keyAccepted = () => false,
}: PersistedQueryOptions = {}): Plugin[] {
  const local = boundedDocumentStore(maxEntries, maxBytes);
  const registered: DocumentRegistry = registry ?? {
    get: async (hash) => local?.get(hash),
    set: async (hash, document) => {
      local?.set(hash, document);
    },
  };
  // Automatic persisted queries, the protocol of Apollo's link: a hash alone runs the document kept
  // for it; a document with its hash is checked against it. Keeping it waits for the verdict on the
  // key (`registration` below). Written here rather than with yoga's APQ plugin, whose peer range of
  // @graphql-tools/utils stops below the one graphql-yoga itself needs, so that installing the package
  // warns. Errors answer 200 with the error in the body: what Apollo's link and urql's exchange look
  // for before retrying.
  const apq: Plugin = {
    async onParams({ params, setParams }) {
      const persisted = persistedQueryOf(params.extensions);
      if (persisted === null) return;
      if (params.query == null) {
        const hash = persisted.sha256Hash;
        const document = manifest.get(hash) ?? (await registered.get(hash).catch(() => undefined));
        if (document === undefined) {
          throw createGraphQLError('PersistedQueryNotFound', {
            extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' satisfies ErrorCode, http: { status: 200 } },
          });
        }
        setParams({ ...params, query: document });
      } else if (sha256Hex(params.query) !== persisted.sha256Hash) {
        throw createGraphQLError('PersistedQueryMismatch', {
          extensions: { code: 'PERSISTED_QUERY_MISMATCH' satisfies ErrorCode, http: { status: 200 } },
        });
      }
    },
  };
  // Documents sent with their hash, by request: seen before the APQ plugin fills in a hash-only request's
  // document (which is kept already), and checked by it after (a wrong hash fails the request, which then
  // never runs, so never registers).
  const sent = new WeakMap<Request, { hash: string; document: string }>();
  const registration: Plugin = {
    onParams({ params, request }) {
      const persisted = (params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery;
      if (typeof params.query !== 'string' || typeof persisted?.sha256Hash !== 'string') return;
      if (manifest.has(persisted.sha256Hash)) return;
      sent.set(request, { hash: persisted.sha256Hash, document: params.query });
    },
    onExecute({ args }) {
      const context = args.contextValue as { request?: Request };
      const document = context.request === undefined ? undefined : sent.get(context.request);
      if (document === undefined) return undefined;
      const keep = (): void => {
        if (keyAccepted(context)) void registered.set(document.hash, document.document).catch(() => undefined);
      };
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return keep();
          return { onEnd: keep };
        },
      };
    },
  };
  // GraphQL over HTTP's persisted documents: `documentId: "sha256:<hex>"` in place of the query.
  const documentIds: Plugin = {
    onParams({ params, setParams }) {
      const { documentId, ...rest } = params as typeof params & { documentId?: unknown };
      if (documentId === undefined) return;
      // yoga refuses parameters it does not know: this one is consumed here.
      if (params.query != null || typeof documentId !== 'string') {
        setParams(rest);
        return;
      }
      const document = manifest.get(documentId.replace(/^sha256:/, ''));
      if (document === undefined) {
        throw createGraphQLError('PersistedQueryNotFound', {
          extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' satisfies ErrorCode, http: { status: 404 } },
        });
      }
      setParams({ ...rest, query: document });
    },
  };
  // Trusted-only: nothing a client sends is kept, or a hash could smuggle a document in later.
  if (!trustedOnly) return [documentIds, registration, apq];
  const trustedHashes = new Set(manifest.keys());
  const guard: Plugin = {
    onParams({ params }) {
      if (typeof params.query !== 'string' || !trustedHashes.has(sha256Hex(params.query))) {
        throw createGraphQLError('PersistedQueryOnly: this gateway runs only the documents it was given (PERSISTED_DOCUMENTS).', {
          extensions: { code: 'PERSISTED_QUERY_ONLY' satisfies ErrorCode, http: { status: 400 } },
        });
      }
    },
  };
  return [documentIds, apq, guard];
}
