// What a user is told when a request fails, from the error codes of the gateway's docs/errors.md.
import type { CombinedError } from 'urql';

export interface Problem {
  /** The error code, or NETWORK when the gateway could not be reached. */
  code: string;
  message: string;
  /** Seconds to wait before trying again, when the gateway said. */
  retryAfter: number | null;
}

export function problemOf(error: CombinedError | undefined): Problem | null {
  if (error === undefined) return null;
  if (error.networkError && error.graphQLErrors.length === 0) {
    return { code: 'NETWORK', message: 'The gateway cannot be reached. Is it running?', retryAfter: null };
  }
  const first = error.graphQLErrors[0];
  const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : 'UNKNOWN';
  const retryAfter = typeof first?.extensions?.retryAfter === 'number' ? first.extensions.retryAfter : null;
  switch (code) {
    case 'UNAUTHENTICATED':
      return { code, retryAfter, message: 'This API key was refused. Check it on your account page of the analytics service.' };
    case 'FORBIDDEN':
      return { code, retryAfter, message: 'This key may not read that. Ask the administrator of the analytics install.' };
    case 'NOT_FOUND':
      return { code, retryAfter, message: 'This key has no such website.' };
    case 'RATE_LIMITED':
      return { code, retryAfter, message: `Too many requests for this key: try again in ${retryAfter ?? 60} s.` };
    case 'OVERLOADED':
      return { code, retryAfter: retryAfter ?? 1, message: 'The gateway is busy: try again in a moment.' };
    case 'UPSTREAM_UNAVAILABLE':
    case 'UPSTREAM_TIMEOUT':
    case 'UPSTREAM_ERROR':
    case 'UPSTREAM_BAD_RESPONSE':
      return { code, retryAfter, message: 'The analytics install is not answering properly. Try again later.' };
    case 'PERSISTED_QUERY_ONLY':
    case 'PERSISTED_QUERY_NOT_FOUND':
      return {
        code,
        retryAfter,
        message: "The gateway does not know this dashboard's queries: start it with this build's persisted-documents.json.",
      };
    default:
      return { code, retryAfter, message: first?.message ?? error.message };
  }
}
