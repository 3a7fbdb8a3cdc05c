// The key's id: a keyed hash of the canonical key, remembered for recent keys within a bound that made-up
// keys cannot push past.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KEY_IDS_REMEMBERED, keyIdOf, rememberedKeyIds } from '../src/api-key.js';

/** The id as its definition says: HMAC-SHA-256 of the key under the secret, base64url, 32 characters. */
const expectedId = (secret: string, authorization: string): string =>
  createHmac('sha256', secret).update(authorization).digest('base64url').slice(0, 32);

describe('keyIdOf', () => {
  it('is the keyed hash of the key, the same each time, and another under another secret', () => {
    const key = 'Bearer key-of-a-tenant';
    for (let round = 0; round < 3; round++) expect(keyIdOf('secret-1', key)).toBe(expectedId('secret-1', key));
    // Remembered with its secret: a store whose secret changed gets the id under the new one.
    expect(keyIdOf('secret-2', key)).toBe(expectedId('secret-2', key));
    expect(keyIdOf('secret-2', key)).not.toBe(keyIdOf('secret-1', key));
    expect(keyIdOf('secret-1', 'Bearer another-key')).toBe(expectedId('secret-1', 'Bearer another-key'));
  });

  it('remembers at most its count of keys, however many made-up keys come, and no key longer than a key is', () => {
    const { count, keyChars } = KEY_IDS_REMEMBERED;
    for (let n = 0; n < count * 2 + 500; n++) keyIdOf('secret', `Bearer made-up-${n}`);
    expect(rememberedKeyIds()).toBe(count);
    // The most recent ones are still right, and the first ones, long gone, are made again alike.
    expect(keyIdOf('secret', `Bearer made-up-${count * 2 + 499}`)).toBe(expectedId('secret', `Bearer made-up-${count * 2 + 499}`));
    expect(keyIdOf('secret', 'Bearer made-up-0')).toBe(expectedId('secret', 'Bearer made-up-0'));
    // A header of kilobytes is hashed each time, never held: what is remembered does not change.
    const before = rememberedKeyIds();
    const long = `Bearer ${'x'.repeat(keyChars)}`;
    for (let n = 0; n < 100; n++) expect(keyIdOf('secret', `${long}${n}`)).toBe(expectedId('secret', `${long}${n}`));
    expect(rememberedKeyIds()).toBe(before);
  });
});
