import { describe, expect, it } from 'vitest';
import { describeAllowedOrigins, isAllowedOrigin } from '../../src/graphql/cors.js';

describe('isAllowedOrigin', () => {
  const dev = { corsOrigins: [], production: false };
  const prod = { corsOrigins: ['https://app.example.com'], production: true };

  it('allows pages served from this machine outside production, on any port', () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://localhost'])
      expect(isAllowedOrigin(origin, dev)).toBe(true);
  });

  it('refuses look-alikes and other sites', () => {
    for (const origin of [
      'https://localhost:5173',
      'http://localhost.evil.example',
      'http://127.0.0.1.evil.example',
      'https://evil.example',
      'null',
    ]) {
      expect(isAllowedOrigin(origin, dev), origin).toBe(false);
    }
  });

  it('in production, only CORS_ORIGINS', () => {
    expect(isAllowedOrigin('https://app.example.com', prod)).toBe(true);
    expect(isAllowedOrigin('http://localhost:5173', prod)).toBe(false);
    expect(isAllowedOrigin('https://any.example', { corsOrigins: ['*'], production: true })).toBe(true);
  });

  it('says which origins are allowed', () => {
    expect(describeAllowedOrigins(dev)).toBe('http://localhost:* and http://127.0.0.1:* (not in production)');
    expect(describeAllowedOrigins(prod)).toBe('https://app.example.com');
    expect(describeAllowedOrigins({ corsOrigins: [], production: true })).toMatch(/^none/);
  });
});
