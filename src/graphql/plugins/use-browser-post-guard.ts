// A web page on another site can make a browser POST to the gateway without asking first (no CORS
// preflight) only with the content types an HTML form may send: urlencoded, multipart, text/plain, or
// none. The key is a header such a request cannot carry, so it could not act as a user anyway; still,
// nothing it sends is run: it is refused with 415 before GraphQL reads it. Every GraphQL client sends
// JSON (application/json or application/graphql-response+json), which needs a preflight cross-site.
// (This replaces yoga's CSRF prevention, which also refused plain GETs and broke urql's defaults.)
import type { Plugin } from 'graphql-yoga';

const SIMPLE_FORM_TYPES = new Set(['', 'application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

export function useBrowserPostGuard(): Plugin {
  return {
    onRequest({ request, fetchAPI, endResponse }) {
      if (request.method !== 'POST') return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!SIMPLE_FORM_TYPES.has(mediaType)) return;
      const body = {
        errors: [
          {
            message: 'Send GraphQL as JSON (Content-Type: application/json); form and text bodies are not accepted.',
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), { status: 415, headers: { 'content-type': 'application/json; charset=utf-8' } }),
      );
    },
  };
}
