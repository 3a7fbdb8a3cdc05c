import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding, pageBody, renderGraphiQLPage } from '../../../src/graphql/plugins/use-graphiql-page.js';
import { createGateway, type Gateway } from '../../../src/gateway.js';
import { KEY_1, testConfig } from '../../fixture.js';

async function page(url: string): Promise<{ status: number; type: string | null; html: string }> {
  const response = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
  return { status: response.status, type: response.headers.get('content-type'), html: await response.text() };
}

describe('GraphiQL', () => {
  let sandboxMode: Gateway;
  let plain: Gateway;
  beforeAll(async () => {
    // No upstream call is made by these tests; any URL will do.
    sandboxMode = await createGateway(testConfig('http://127.0.0.1:9'), { demoKey: KEY_1 });
    plain = await createGateway(testConfig('http://127.0.0.1:9'));
  });
  afterAll(async () => {
    await sandboxMode.close();
    await plain.close();
  });

  it('is served from our own dependencies: nothing is loaded from another host', async () => {
    const { status, type, html } = await page(sandboxMode.url);
    expect(status).toBe(200);
    expect(type).toContain('text/html');
    expect(html).toContain('renderYogaGraphiQL');
    // Every resource the page loads is inline: no src/href to any URL, no import of a remote module.
    // Only the markup: script bodies are our inlined bundle, whose strings may look like tags.
    const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?<\/script>/gi, '$1</script>');
    const loads = [...markup.matchAll(/<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]);
    expect(loads.filter((url) => url !== undefined && !url.startsWith('data:'))).toEqual([]);
    expect(html).not.toMatch(/import\s*\(\s*["']https?:/);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs|esm\.sh/);
  });

  it('opens on the dashboard example, with the demo key prefilled in sandbox mode', async () => {
    const { html } = await page(sandboxMode.url);
    expect(html).toContain('query Dashboard');
    expect(html).toContain('period: LAST_30_DAYS');
    expect(html).toContain(`Bearer ${KEY_1}`);
  });

  it('prefills no key against a real install', async () => {
    const { html } = await page(plain.url);
    expect(html).toContain('query Dashboard');
    expect(html).not.toContain('Bearer ');
  });

  it('is sent compressed as the browser accepts, the same page whatever the encoding', async () => {
    const raw = async (acceptEncoding: string) => {
      const response = await request(`${plain.url}/graphql`, { headers: { accept: 'text/html', 'accept-encoding': acceptEncoding } });
      return { headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
    };
    const identity = await raw('identity');
    expect(identity.headers['content-encoding']).toBeUndefined();
    const html = identity.body.toString('utf8');
    expect(html).toContain('renderYogaGraphiQL');

    const br = await raw('gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString('utf8')).toBe(html);
    const gzip = await raw('gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).toString('utf8')).toBe(html);
    // A compressed page is a fraction of the 9 MB bundle.
    expect(br.body.length).toBeLessThan(identity.body.length / 3);
    expect(gzip.body.length).toBeLessThan(identity.body.length / 3);
    for (const { headers } of [identity, br, gzip]) {
      expect(headers.vary).toBe('Accept-Encoding, Origin');
      expect(headers['cache-control']).toBe('private, no-cache');
      expect(headers['content-type']).toBe('text/html; charset=utf-8');
      expect(headers['content-security-policy']).toContain("default-src 'none'");
    }
    // Its one inline script is the only one it may run, named by its SHA-256: nothing unsafe is allowed.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] ?? '');
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256')
      .update(scripts[0] ?? '')
      .digest('base64');
    expect(String(identity.headers['content-security-policy'])).toContain(`; script-src 'sha256-${hash}'; `);
    expect(String(identity.headers['content-security-policy'])).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
  });

  it('compresses an encoding when a client first asks for it, once: a client that accepts none costs no compression', async () => {
    const rendered = await renderGraphiQLPage({});
    expect([...rendered.bodies.keys()]).toEqual(['identity']);
    const identity = Buffer.from(await pageBody(rendered, 'identity'));
    expect([...rendered.bodies.keys()]).toEqual(['identity']);

    const gzip = pageBody(rendered, 'gzip');
    // Asked again while it is being compressed, and after: the same compression.
    expect(pageBody(rendered, 'gzip')).toBe(gzip);
    expect(gunzipSync(await gzip).equals(identity)).toBe(true);
    expect(pageBody(rendered, 'gzip')).toBe(gzip);
    expect([...rendered.bodies.keys()]).toEqual(['identity', 'gzip']);
    expect(brotliDecompressSync(await pageBody(rendered, 'br')).equals(identity)).toBe(true);
    expect([...rendered.bodies.keys()]).toEqual(['identity', 'gzip', 'br']);
  });

  it('has an ETag: a second visit that sends it back gets a 304 with no body', async () => {
    const first = await request(`${plain.url}/graphql`, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    await first.body.dump();
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const second = await request(`${plain.url}/graphql`, {
      headers: { accept: 'text/html', 'accept-encoding': 'br', 'if-none-match': String(etag) },
    });
    expect(second.statusCode).toBe(304);
    expect((await second.body.arrayBuffer()).byteLength).toBe(0);
    expect(second.headers.etag).toBe(etag);
    const stale = await request(`${plain.url}/graphql`, { headers: { accept: 'text/html', 'if-none-match': '"another"' } });
    expect(stale.statusCode).toBe(200);
    await stale.body.dump();
  });

  it('can be switched off', async () => {
    const off = await createGateway(testConfig('http://127.0.0.1:9', { GRAPHIQL: 'false' }));
    try {
      const { html } = await page(off.url);
      expect(html).not.toContain('renderYogaGraphiQL');
    } finally {
      await off.close();
    }
  });
});

describe('introspection', () => {
  it('is on by default and can be switched off', async () => {
    const query = { query: '{ __schema { queryType { name } } }' };
    const on = await createGateway(testConfig('http://127.0.0.1:9'));
    const off = await createGateway(testConfig('http://127.0.0.1:9', { INTROSPECTION: 'false' }));
    try {
      const post = (url: string) =>
        fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(query) }).then(
          (r) => r.json() as Promise<{ data?: unknown; errors?: { message: string }[] }>,
        );
      expect((await post(on.url)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
      const refused = await post(off.url);
      expect(refused.data).toBeUndefined();
      expect(refused.errors?.[0]?.message).toMatch(/introspection/i);
    } finally {
      await on.close();
      await off.close();
    }
  });
});

describe('chooseEncoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0.5, br;q=0.1', 'br'],
    ['deflate', 'identity'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['', 'identity'],
  ] as const)('%j -> %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });

  it('identity when the header is missing', () => {
    expect(chooseEncoding(null)).toBe('identity');
  });
});
