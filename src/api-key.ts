// The caller's API key: the Authorization header read once per request into the one canonical form
// everything of a key uses (nothing else parses it), and its id, for what must name a key without holding it.
import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';

// RFC 9110 (11.4): credentials are a scheme, case-insensitive, then one or more spaces and the token;
// RFC 6750's b64token is what a Bearer token may look like. Anything else is refused before it is forwarded.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export type KeyReading = { authorization: string } | { problem: string };

/** `Bearer <token>`, the token as sent: `bearer K`, `BEARER K` and `Bearer  K` are one key. */
export function readAuthorization(header: string | null | undefined): KeyReading {
  if (header === null || header === undefined || header.trim() === '') {
    return { problem: 'Send your analytics API key as "Authorization: Bearer <key>".' };
  }
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) {
    return {
      problem:
        'The Authorization header must be one "Bearer <key>" (the scheme Bearer, a space, the key from your analytics account page).',
    };
  }
  return { authorization: `Bearer ${token}` };
}

/** The least recently used go first. */
export const KEY_IDS_REMEMBERED = { count: 10_000, keyChars: 256 } as const;

/** A request names its key's entries several times; a key over keyChars is hashed each time (bounded memory). */
const rememberedIds = new LRUCache<string, { secret: string; id: string }>({ max: KEY_IDS_REMEMBERED.count });

/** HMAC-SHA-256 of the canonical Authorization. */
export function keyIdOf(secret: string, authorization: string): string {
  const known = rememberedIds.get(authorization);
  if (known !== undefined && known.secret === secret) return known.id;
  const id = createHmac('sha256', secret).update(authorization).digest('base64url').slice(0, 32);
  if (authorization.length <= KEY_IDS_REMEMBERED.keyChars) rememberedIds.set(authorization, { secret, id });
  return id;
}

export const rememberedKeyIds = (): number => rememberedIds.size;
