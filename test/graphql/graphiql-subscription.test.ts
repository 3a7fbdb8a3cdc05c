// GraphiQL runs a subscription. The page we serve (@graphql-yoga/render-graphiql) builds its fetcher with
// GraphQL Tools' URL loader, `subscriptionsProtocol: GRAPHQL_SSE` and the page's endpoint as the
// subscriptions endpoint; its HTTP executor sends a subscription as a GET of the endpoint with the
// operation in the query string (`query`, `variables` when there are any, `operationName` when named,
// `extensions` when not empty) and `Accept: text/event-stream`, the editor's headers added (the demo
// key), no body and no Content-Type; it reads the answer as server-sent events: the `data:` lines of each
// event as JSON, until `event: complete`. The first test pins that shape in the bundle we serve (an
// upgrade that changes it fails here); the second sends exactly that request, with what a browser adds
// to a same-origin fetch, and reads the events as GraphiQL does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_1, startStack, type Stack } from '../fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' }, gateway: { demoKey: KEY_1 } });
});
afterAll(() => stack.close());

const LIVE = `subscription Live($id: ID!) {
  website(id: $id) {
    id
    today: stats(name: VISITOR, period: TODAY) {
      nodes {
        value
        count
      }
    }
  }
}`;

interface LiveData {
  website: { id: string; today: { nodes: { value: string; count: number }[] } } | null;
}

/** The page as a browser gets it, and the options it hands to renderYogaGraphiQL (its `settings`). */
async function graphiqlPage(): Promise<{ response: Response; html: string; options: Record<string, unknown> }> {
  const response = await fetch(stack.endpoint, { headers: { accept: 'text/html', 'accept-encoding': 'identity' } });
  const html = await response.text();
  const json = /const settings = (\{.*?\});\n/s.exec(html)?.[1];
  if (json === undefined) throw new Error('no renderYogaGraphiQL call in the page');
  return { response, html, options: JSON.parse(json) as Record<string, unknown> };
}

/** GraphiQL's reader of an event stream: events split on a blank line, their `data:` lines as JSON, until `complete`. */
function readAsGraphiQL(body: ReadableStream<Uint8Array>): { next(timeoutMs: number): Promise<unknown> } {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let completed = false;
  const pending: unknown[] = [];
  return {
    async next(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (pending.length === 0) {
        if (completed) return 'complete';
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
        let timer: NodeJS.Timeout | undefined;
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), left);
          }),
        ]).finally(() => clearTimeout(timer));
        if (chunk.done) return 'closed';
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (data) {
            const parsed = JSON.parse(data) as { payload?: unknown };
            pending.push(parsed.payload ?? parsed);
          }
          if (event.split('event:')[1]?.trim().split('\n')[0]?.trim() === 'complete') completed = true;
        }
      }
      return pending.shift();
    },
  };
}

describe('GraphiQL and subscriptions', () => {
  it('serves a page whose fetcher sends subscriptions as a GET of this endpoint for an event stream, and a policy that lets it', async () => {
    const { response, html, options } = await graphiqlPage();
    expect(response.status).toBe(200);
    // The fetcher's settings: GraphQL over SSE at the page's own endpoint, no method of ours.
    expect(options).toMatchObject({ endpoint: '/graphql', headers: JSON.stringify({ Authorization: `Bearer ${KEY_1}` }) });
    expect(options).not.toHaveProperty('method');
    expect(options).not.toHaveProperty('subscriptionsProtocol');
    expect(html).toMatch(/subscriptionsProtocol:[\w$]+\.GRAPHQL_SSE,subscriptionsEndpoint:[\w$]+,credentials:"same-origin"/);
    // The HTTP executor: a subscription is a GET (unless a method was given) for text/event-stream.
    expect(html).toMatch(/==="subscription"\|\|[\w$]+\([\w$]+\)\?\([\w$]+\|\|="GET",[\w$]+="text\/event-stream"/);
    expect(html).toContain('searchParams.set("query",');
    expect(html).toContain('searchParams.set("variables",JSON.stringify(');
    expect(html).toContain('searchParams.set("operationName",');
    // Its Content-Security-Policy lets the page fetch from its own origin, and run its editor's workers.
    const policy = new Map(
      (response.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name = '', ...values]) => [name, values]),
    );
    expect(policy.get('connect-src')).toContain("'self'");
    expect(policy.get('worker-src')).toContain('blob:');
  });

  it("answers GraphiQL's exact request with a working stream: the first result at once, then the data as it changes", async () => {
    const { options } = await graphiqlPage();
    // The editor's headers (prefilled with the demo key), as the user runs the operation.
    const editorHeaders = JSON.parse(String(options.headers)) as Record<string, string>;
    // And those it adds to every request: X-Gateway-Trace, which an event stream does not answer.
    const addedHeaders = options.additionalHeaders as Record<string, string>;
    expect(addedHeaders).toEqual({ 'x-gateway-trace': '1' });
    const url = new URL(stack.endpoint);
    url.searchParams.set('query', LIVE);
    url.searchParams.set('variables', JSON.stringify({ id: '1' }));
    url.searchParams.set('operationName', 'Live');
    const abort = new AbortController();
    const response = await fetch(url, {
      method: 'GET',
      headers: {
        accept: 'text/event-stream',
        ...editorHeaders,
        ...addedHeaders,
        // What a browser adds to a same-origin fetch (no Origin on a GET; no Referer: the page's policy).
        'accept-encoding': 'gzip, deflate, br, zstd',
        'accept-language': 'en-US,en;q=0.9',
        'sec-fetch-dest': 'empty',
        'sec-fetch-mode': 'cors',
        'sec-fetch-site': 'same-origin',
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      },
      credentials: 'same-origin',
      signal: abort.signal,
    });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(['none', null]).toContain(response.headers.get('content-encoding'));
      expect(response.headers.get('x-accel-buffering')).toBe('no');
      const events = readAsGraphiQL(response.body as ReadableStream<Uint8Array>);
      const first = (await events.next(5_000)) as { data?: LiveData; errors?: unknown };
      expect(first.errors).toBeUndefined();
      expect(first.data?.website?.id).toBe('1');
      expect((first as { extensions?: Record<string, unknown> }).extensions?.trace).toBeUndefined();
      const before = first.data?.website?.today.nodes[0]?.count ?? 0;
      const added = await fetch(`${stack.sandbox.url}/__sandbox/traffic`, {
        method: 'POST',
        body: JSON.stringify({ websiteId: 1, visitors: 4 }),
      });
      expect(added.status).toBe(204);
      const changed = (await events.next(5_000)) as { data?: LiveData };
      expect(changed.data?.website?.today.nodes[0]?.count).toBe(before + 4);
      expect((changed as { extensions?: Record<string, unknown> }).extensions?.trace).toBeUndefined();
    } finally {
      abort.abort();
    }
  });
});
