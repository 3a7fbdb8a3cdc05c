import { describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../../src/http-headers.js';
import { useSecurityHeaders } from '../../../src/graphql/plugins/use-security-headers.js';
import { post, tinyYoga } from './yoga.js';

describe('useSecurityHeaders', () => {
  const yoga = tinyYoga([useSecurityHeaders()]);

  it('puts nosniff and no-referrer on every response, and no page policy on JSON', async () => {
    const { response } = await post(yoga, { query: '{ hello }' });
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('content-security-policy')).toBeNull();
    expect(Object.keys(SECURITY_HEADERS).sort()).toEqual(['referrer-policy', 'x-content-type-options']);
  });

  it('gives an HTML page a strict policy and forbids framing it', async () => {
    const response = await yoga.fetch('http://yoga.test/graphql', { headers: { accept: 'text/html' } });
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'.*connect-src 'self'.*frame-ancestors 'none'/);
    // A page that names no script of its own (yoga's, here) runs none.
    expect(response.headers.get('content-security-policy')).toContain("script-src 'none';");
  });
});
