// Headers for every response (and `Vary: Origin`), and a strict policy for HTML: the GraphiQL page runs
// only its own inline script, named by its SHA-256 (use-graphiql-page.ts sets the policy with it), and
// talks only to this origin. Neither 'unsafe-inline' nor 'unsafe-eval': a <script> or an inline event
// handler (onerror=…) that found its way into the page does not run.
import type { Plugin } from 'graphql-yoga';
import { SECURITY_HEADERS, appendVary } from '../../http-headers.js';

/**
 * The policy of an HTML page whose own inline scripts are those whose hashes (`sha256-…`, base64) are
 * given: no other script, inline or not, runs; styles may be inline (GraphiQL's editor sets them); the
 * editor's workers come from blob: URLs the page makes; requests go to this origin only.
 */
export function htmlPolicy(scriptHashes: readonly string[]): string {
  const scripts = scriptHashes.length === 0 ? "'none'" : scriptHashes.map((hash) => `'${hash}'`).join(' ');
  return (
    `default-src 'none'; script-src ${scripts}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
  );
}

/** Any other HTML: no script at all. */
const HTML_POLICY = htmlPolicy([]);

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

export function useSecurityHeaders(): Plugin {
  return {
    onResponse({ response }) {
      for (const [name, value] of SECURITY_HEADER_ENTRIES) response.headers.set(name, value);
      // CORS headers depend on the Origin, so no shared cache may answer one origin with another's.
      appendVary(response.headers, ['Origin']);
      if (response.headers.get('content-type')?.includes('text/html')) {
        response.headers.set('x-frame-options', 'DENY');
        // The GraphiQL page's names its own script; any other HTML gets the policy that runs none.
        if (!response.headers.has('content-security-policy')) response.headers.set('content-security-policy', HTML_POLICY);
      }
    },
  };
}
