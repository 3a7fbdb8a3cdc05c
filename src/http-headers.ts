// Header rules that the HTTP layer (answers given before GraphQL) and yoga's plugins share: the security
// headers of every answer, Vary lists, If-None-Match against an ETag, whether an Accept takes an event
// stream or which JSON type it gets, and whether a request asks for the GraphiQL page.

/** The path GraphQL is served at. */
export const GRAPHQL_ENDPOINT = '/graphql';

/** On every response: yoga's, and those the HTTP layer gives before yoga runs (http/refusals.ts). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/**
 * An HTML page's Content-Security-Policy: it runs only its own inline scripts, named by their SHA-256,
 * neither 'unsafe-inline' nor 'unsafe-eval', so a <script> or an inline event handler (onerror=…) that
 * found its way into the page does not run; it talks only to this origin.
 */
export function htmlPolicy(scriptHashes: readonly string[]): string {
  const scripts = scriptHashes.length === 0 ? "'none'" : scriptHashes.map((hash) => `'${hash}'`).join(' ');
  return (
    `default-src 'none'; script-src ${scripts}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
  );
}

/** Adds `names` to the response's Vary, each once, keeping what is there. */
export function appendVary(headers: Headers, names: readonly string[]): void {
  const vary = headers.get('vary');
  // The common case: no Vary yet (names are given once each).
  if (vary === null || vary === '') return headers.set('vary', names.join(', '));
  const present = vary
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const missing = names.filter((name) => !present.includes(name.toLowerCase()));
  if (missing.length > 0) headers.set('vary', [vary, ...missing].join(', '));
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/** Whether If-None-Match names `etag` (or `*`), compared weakly as RFC 9110 says for this header. */
export function ifNoneMatchHas(ifNoneMatch: string | null, etag: string): boolean {
  return ifNoneMatch?.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag)) ?? false;
}

/** Why a subscription that cannot be streamed is refused, by the HTTP layer (406) or by use-work.ts. */
export const NOT_STREAMABLE_MESSAGE = 'A subscription is answered as an event stream: send it with "Accept: text/event-stream".';

/**
 * Whether yoga answers a subscription to a request with this Accept as an event stream: a subscription's
 * result is a stream, which of yoga's result processors only SSE takes, when one of the accepted media
 * types (utf-8 only; a missing Accept is `*\/*`) matches text/event-stream. Otherwise yoga answers 406:
 * such a subscription cannot be streamed, and the gateway refuses it at once.
 */
export function streamsSubscription(accept: string | undefined): boolean {
  return acceptedMediaTypes(accept).some((mediaType) => matches(mediaType, 'text/event-stream'));
}

/** The media types an Accept asks for, as yoga reads them: utf-8 only, a missing Accept is `*\/*`, in order. */
function acceptedMediaTypes(accept: string | undefined): string[] {
  const accepted: string[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset === 'charset=utf-8') accepted.push(mediaType);
  }
  return accepted;
}

/**
 * The media type yoga answers a query's result in for this Accept, as its result processors choose it
 * (the last match wins: event stream, multipart, then the JSON types, over the accepted types in reverse
 * order); null when that is not one of the JSON types.
 */
export function jsonAnswerType(accept: string | undefined): 'application/json' | 'application/graphql-response+json' | null {
  const accepted = acceptedMediaTypes(accept).reverse();
  let chosen: string | null = null;
  for (const offered of [['text/event-stream'], ['multipart/mixed'], ['application/graphql-response+json', 'application/json']]) {
    for (const asked of accepted) for (const type of offered) if (matches(asked, type)) chosen = type;
  }
  return chosen === 'application/json' || chosen === 'application/graphql-response+json' ? chosen : null;
}

function matches(asked: string, mediaType: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = mediaType.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/**
 * Whether a request asks for the GraphiQL page: a browser's GET of the endpoint (`path` may carry a query
 * string). The HTTP layer asks too: the page is no work, and never waits for a MAX_ACTIVE_REQUESTS slot.
 */
export function wantsGraphiQLPage(
  method: string | undefined,
  accept: string | null | undefined,
  path = '',
  endpoint = '/graphql',
): boolean {
  const pathname = path.split('?', 1)[0];
  return method === 'GET' && (accept ?? '').includes('text/html') && (pathname === endpoint || pathname === `${endpoint}/`);
}

/** The request header that asks for the request's trace (graphql/plugins/use-request-trace.ts), with the value `1`. */
export const TRACE_HEADER = 'x-gateway-trace';

/** Whether a request's X-Gateway-Trace asks for its trace. */
export function asksForTrace(header: string | string[] | undefined): boolean {
  return header === '1';
}

/**
 * Names the MCP tool whose call a GraphQL request runs (mcp/server.ts), for its log line. Any client may
 * send it, as any client names its operation: it labels the caller's own line and changes nothing else.
 */
export const TOOL_HEADER = 'x-gateway-mcp-tool';

/** What a tool may be named, as MCP clients check it: also all a TOOL_HEADER may say. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
