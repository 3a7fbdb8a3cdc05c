// Persisted queries. APQ: a document sent with its hash is kept only once its request ran and the
// upstream accepted its key, so a made-up key cannot fill the store. Trusted documents: the manifest a
// frontend was built with (client-preset's `{ "sha256:<hex>": "<document>" }`), run by hash.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { ErrorCode } from '../../errors.js';
import { defaultsOf, flag, integer, text } from '../../settings.js';

export interface PersistedQueryOptions {
  maxEntries?: number;
  maxBytes?: number;
  /** By SHA-256 hex. */
  manifest?: ReadonlyMap<string, string>;
  trustedOnly?: boolean;
  /** Instead of this process's store (Redis, shared by gateways). */
  registry?: DocumentRegistry;
  /** Asked once the operation ran: a registration is kept only then. Default: never. */
  keyAccepted?: (context: object) => boolean;
}

/** Failures make a document unknown, never a request fail. */
export interface DocumentRegistry {
  get(hash: string): Promise<string | undefined>;
  set(hash: string, document: string): Promise<void>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Documents by hash, least recently used out first; null when a bound is 0. */
export function boundedDocumentStore(maxEntries: number, maxBytes: number): LRUCache<string, string> | null {
  if (maxEntries === 0 || maxBytes === 0) return null;
  // lru-cache counts a size of at least 1: an empty document weighs a byte.
  return new LRUCache({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (document) => Math.max(1, Buffer.byteLength(document)) });
}

/** Reads a client-preset manifest; one whose keys are not its documents' SHA-256 is refused at start-up. */
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

function persistedQueryOf(extensions: unknown): { sha256Hash: string } | null {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (persisted?.version !== 1 || typeof persisted.sha256Hash !== 'string') return null;
  return { sha256Hash: persisted.sha256Hash };
}

const refusal = (message: string, code: ErrorCode, status: number) =>
  createGraphQLError(message, { extensions: { code, http: { status } } });
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
    set: async (hash, document) => void local?.set(hash, document),
  };
  // Not yoga's APQ plugin: its peer range of @graphql-tools/utils stops below graphql-yoga's own. Errors
  // answer 200, which Apollo's link and urql's exchange look for before retrying.
  const apq: Plugin = {
    async onParams({ params, setParams }) {
      const persisted = persistedQueryOf(params.extensions);
      if (persisted === null) return;
      if (params.query == null) {
        const hash = persisted.sha256Hash;
        const document = manifest.get(hash) ?? (await registered.get(hash).catch(() => undefined));
        if (document === undefined) throw refusal('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', 200);
        setParams({ ...params, query: document });
      } else if (sha256Hex(params.query) !== persisted.sha256Hash) {
        throw refusal('PersistedQueryMismatch', 'PERSISTED_QUERY_MISMATCH', 200);
      }
    },
  };
  // Documents sent with their hash: seen before `apq` fills in a hash-only request's; a wrong hash fails
  // the request, which then never runs, so never registers.
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
  // GraphQL over HTTP's `documentId: "sha256:<hex>"` in place of the query.
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
      if (document === undefined) throw refusal('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', 404);
      setParams({ ...rest, query: document });
    },
  };
  // Trusted-only: nothing a client sends is kept, or a hash could smuggle a document in later.
  if (!trustedOnly) return [documentIds, registration, apq];
  const trustedHashes = new Set(manifest.keys());
  const guard: Plugin = {
    onParams({ params }) {
      if (typeof params.query !== 'string' || !trustedHashes.has(sha256Hex(params.query))) {
        const message = 'PersistedQueryOnly: this gateway runs only the documents it was given (PERSISTED_DOCUMENTS).';
        throw refusal(message, 'PERSISTED_QUERY_ONLY', 400);
      }
    },
  };
  return [documentIds, apq, guard];
}
