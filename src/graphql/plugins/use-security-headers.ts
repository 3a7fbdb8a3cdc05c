// Headers for every response (and `Vary: Origin`), and a strict policy for the GraphiQL page: it runs
// only its own inline code and talks only to this origin.
import type { Plugin } from 'graphql-yoga';
import { SECURITY_HEADERS, appendVary } from '../../http-headers.js';

const GRAPHIQL_POLICY =
  "default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

export function useSecurityHeaders(): Plugin {
  return {
    onResponse({ response }) {
      for (const [name, value] of SECURITY_HEADER_ENTRIES) response.headers.set(name, value);
      // CORS headers depend on the Origin, so no shared cache may answer one origin with another's.
      appendVary(response.headers, ['Origin']);
      if (response.headers.get('content-type')?.includes('text/html')) {
        response.headers.set('x-frame-options', 'DENY');
        response.headers.set('content-security-policy', GRAPHIQL_POLICY);
      }
    },
  };
}
