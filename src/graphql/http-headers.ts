// Header rules more than one answer follows: Vary lists, and If-None-Match against an ETag.

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
