// The caller's API key. The Authorization header is read here, once per request, into one canonical
// form: everything of a key (what goes upstream, its cache partition and revocation, stored answers,
// live topics, caps and budget, logs) uses that form. And the key's id, for what must name a key without
// holding it (the store's names, live topics). Nothing else parses the header.
import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';

// RFC 9110 (11.4): credentials are a scheme, case-insensitive, then one or more spaces and the token;
// RFC 6750's b64token is what a Bearer token may look like. Anything else is refused before it is forwarded.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The key as read: its canonical `Bearer <token>`, or what is wrong with the header. */
export type KeyReading = { authorization: string } | { problem: string };

/**
 * The credential in its one canonical form, `Bearer <token>` (the token as sent): `bearer K`, `BEARER K`
 * and `Bearer  K` are one key; or an error saying what is wrong.
 */
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

/** How many keys' ids are remembered (the least recently used go first), and the longest key remembered. */
export const KEY_IDS_REMEMBERED = { count: 10_000, keyChars: 256 } as const;

/**
 * Recent keys' ids, each with the secret it was made with: a key's requests name its entries in the store
 * several times each, and an HMAC is an object and two hashes. Bounded by count, and a key longer than a
 * key is (a header of kilobytes) is hashed each time: made-up keys take at most count × keyChars.
 */
const rememberedIds = new LRUCache<string, { secret: string; id: string }>({ max: KEY_IDS_REMEMBERED.count });

/** An API key's id: a keyed hash (HMAC-SHA-256) of its canonical Authorization, never the key. */
export function keyIdOf(secret: string, authorization: string): string {
  const known = rememberedIds.get(authorization);
  if (known !== undefined && known.secret === secret) return known.id;
  const id = createHmac('sha256', secret).update(authorization).digest('base64url').slice(0, 32);
  if (authorization.length <= KEY_IDS_REMEMBERED.keyChars) rememberedIds.set(authorization, { secret, id });
  return id;
}

/** How many keys' ids are remembered now. */
export const rememberedKeyIds = (): number => rememberedIds.size;
