// Header rules that the HTTP layer and yoga's plugins share.

export const GRAPHQL_ENDPOINT = '/graphql';

/** On every response: yoga's, and those the HTTP layer gives before yoga runs (http/refusals.ts). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/** Only its own inline scripts run, by SHA-256 (an injected <script> or onerror=… does not); only this origin. */
export function htmlPolicy(scriptHashes: readonly string[]): string {
  const scripts = scriptHashes.length === 0 ? "'none'" : scriptHashes.map((hash) => `'${hash}'`).join(' ');
  return (
    `default-src 'none'; script-src ${scripts}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
  );
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/** Compared weakly, as RFC 9110 says for this header. */
export function ifNoneMatchHas(ifNoneMatch: string | null, etag: string): boolean {
  return ifNoneMatch?.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag)) ?? false;
}

/** By the HTTP layer (406) or by use-work.ts. */
export const NOT_STREAMABLE_MESSAGE = 'A subscription is answered as an event stream: send it with "Accept: text/event-stream".';

/** Whether yoga streams a subscription for this Accept (only its SSE processor takes a stream); else 406. */
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

/** As yoga's result processors choose it (the last match wins, types in reverse); null: not a JSON type. */
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

/** A browser's GET of the endpoint: the HTTP layer asks too, since the page never waits for a slot. */
export function wantsGraphiQLPage(
  method: string | undefined,
  accept: string | null | undefined,
  path = '',
  endpoint = '/graphql',
): boolean {
  const pathname = path.split('?', 1)[0];
  return method === 'GET' && (accept ?? '').includes('text/html') && (pathname === endpoint || pathname === `${endpoint}/`);
}

/** The header that asks for the request's trace (use-request-trace.ts), with the value `1`. */
export const TRACE_HEADER = 'x-gateway-trace';

export function asksForTrace(header: string | string[] | undefined): boolean {
  return header === '1';
}

/** The MCP tool a request runs, for its log line: any client may send it, it labels only its own line. */
export const TOOL_HEADER = 'x-gateway-mcp-tool';

/** As MCP clients check it: also all a TOOL_HEADER may say. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
