// A page on another site can make a browser POST without a CORS preflight only with a form's content
// types. It could not carry the key anyway; still, it is refused with 415 before GraphQL reads it. GraphQL
// clients send JSON. (Yoga's CSRF prevention also refused plain GETs, which broke urql's defaults.)
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
