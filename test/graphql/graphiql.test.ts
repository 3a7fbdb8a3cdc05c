import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/http/server.js';
import { KEY_1, TODAY, testConfig } from '../fixture.js';

async function page(url: string): Promise<{ status: number; type: string | null; html: string }> {
  const response = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
  return { status: response.status, type: response.headers.get('content-type'), html: await response.text() };
}

describe('GraphiQL', () => {
  let sandboxMode: Gateway;
  let plain: Gateway;
  beforeAll(async () => {
    // No upstream call is made by these tests; any URL will do.
    sandboxMode = await createGateway(testConfig('http://127.0.0.1:9'), { demoKey: KEY_1, today: TODAY });
    plain = await createGateway(testConfig('http://127.0.0.1:9'), { today: TODAY });
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
    expect(loads.filter((url) => !url!.startsWith('data:'))).toEqual([]);
    expect(html).not.toMatch(/import\s*\(\s*["']https?:/);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs|esm\.sh/);
  });

  it('opens on the dashboard example, with the demo key prefilled in sandbox mode', async () => {
    const { html } = await page(sandboxMode.url);
    expect(html).toContain('query Dashboard');
    expect(html).toContain('from: \\"2026-02-14\\", to: \\"2026-03-15\\"');
    expect(html).toContain(`Bearer ${KEY_1}`);
  });

  it('prefills no key against a real install', async () => {
    const { html } = await page(plain.url);
    expect(html).toContain('query Dashboard');
    expect(html).not.toContain('Bearer ');
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
      expect(refused.errors![0]!.message).toMatch(/introspection/i);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
