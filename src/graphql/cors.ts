// Which browser origins may read answers. The key is a header a browser never attaches by itself, so
// CORS decides who reads, not who acts. Outside production, this machine's pages (a dev server) are
// allowed too; CORS_ORIGINS names the others.
import { z } from 'zod';
import { custom, type SettingsOf, shown } from '../settings.js';

const LOCAL_DEV_ORIGIN = /^http:\/\/(?:localhost|127\.0\.0\.1)(?::\d{1,5})?$/;

/** What Apollo Client, urql, graphql-request and GraphiQL send. */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  'x-graphql-yoga-csrf',
  'x-gateway-trace',
];

export const CORS_EXPOSED_HEADERS = ['retry-after', 'etag', 'cache-control'];

// An origin is a scheme, a host and a port: never a user or a password.
const ORIGIN = /^https?:\/\/[^/\s@]+$/;

export const CORS_SETTINGS = {
  corsOrigins: custom(
    'CORS_ORIGINS',
    z
      .string()
      // Before it is split: a password may hold a comma, and its halves would be quoted.
      .refine((value) => !value.includes('@'), {
        error: (issue) =>
          `CORS_ORIGINS entries must be origins such as https://app.example.com (or *), never with a user or password, got "${shown(issue.input)}"`,
        abort: true,
      })
      .transform((value) =>
        value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z.string().refine((entry) => entry === '*' || ORIGIN.test(entry), {
            error: (issue) => `CORS_ORIGINS entries must be origins such as https://app.example.com (or *), got "${shown(issue.input)}"`,
          }),
        ),
      ),
    { fallback: [] as string[], shown: null, unit: 'list of origins', doc: 'comma-separated allowed origins, or *' },
  ),
};

export type CorsConfig = SettingsOf<typeof CORS_SETTINGS> & { production: boolean };

export function isAllowedOrigin(origin: string, { corsOrigins, production }: CorsConfig): boolean {
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return true;
  return !production && LOCAL_DEV_ORIGIN.test(origin);
}

export function corsOptionsFor(origin: string) {
  return {
    origin,
    methods: ['GET', 'POST'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  };
}

/** As yoga writes them, for an answer that is not a preflight. */
export function corsAnswerHeaders(origin: string): string[] {
  const options = corsOptionsFor(origin);
  return Object.entries({
    'access-control-allow-origin': options.origin,
    'access-control-allow-methods': options.methods.join(', '),
    'access-control-allow-headers': options.allowedHeaders.join(', '),
    'access-control-expose-headers': options.exposedHeaders.join(', '),
    'access-control-max-age': String(options.maxAge),
  }).flat();
}

export function describeAllowedOrigins({ corsOrigins, production }: CorsConfig): string {
  const named = corsOrigins.includes('*') ? ['any origin (*)'] : corsOrigins;
  const local = production ? [] : ['http://localhost:* and http://127.0.0.1:* (not in production)'];
  const all = [...named, ...local];
  return all.length === 0 ? 'none (set CORS_ORIGINS to allow a browser app)' : all.join(', ');
}
