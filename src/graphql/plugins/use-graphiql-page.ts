// The GraphiQL page: served from our own dependencies (no CDN), opened on the dashboard example,
// compressed as the browser accepts (brotli or gzip), with an ETag so a second visit is a 304. The
// bundle is megabytes of inlined JavaScript: it is loaded, rendered and compressed on the first view,
// not at start-up, and kept (sizes in docs/performance.md#workers-tracing-graphiql).
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { TRACE_HEADER, htmlPolicy, ifNoneMatchHas, wantsGraphiQLPage } from '../../http-headers.js';
import { TRACE_PANEL_SCRIPT } from '../graphiql-trace-panel.js';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export interface GraphiQLPageOptions {
  /** Where GraphQL is served, and so the page (default /graphql). */
  endpoint?: string;
  /** Key prefilled in the page's headers (sandbox mode only; default none). */
  demoKey?: string;
  /**
   * X-Gateway-Trace is heard (use-request-trace.ts): the page sends it with every run and shows the last
   * run's calls in its "Upstream calls" panel (graphiql-trace-panel.ts). Default off.
   */
  traces?: boolean;
}

/** The query GraphiQL opens on: one website with several statistics of the last 30 days, in one request. */
export const EXAMPLE_QUERY = `# The dashboard: a website and five statistics of the last 30 days, in one request.
query Dashboard {
  website(id: "1") {
    id
    domain
    privacy
    visitors: series(metric: VISITORS, period: LAST_30_DAYS) { total points { date count } }
    pages: stats(name: PAGE, period: LAST_30_DAYS) { nodes { value count share } totalCount }
    countries: stats(name: COUNTRY, period: LAST_30_DAYS) { nodes { label code count } }
    browsers: stats(name: BROWSER, period: LAST_30_DAYS, perPage: 25) { nodes { value count } }
    referrers: stats(name: REFERRER, period: LAST_30_DAYS) { nodes { label count } pageInfo { hasNextPage } }
  }
}
`;

interface RenderedPage {
  etag: string;
  /** Its Content-Security-Policy, which names its script by its hash. */
  policy: string;
  bodies: Record<'identity' | 'br' | 'gzip', Uint8Array<ArrayBuffer>>;
}

/** JSON inside a script element: nothing in it can close the element. */
const inScript = (value: unknown): string => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * The page: yoga's GraphiQL bundle (@graphql-yoga/render-graphiql's parts: its styles, its script and
 * the editor's workers, made blob: URLs as its own page makes them), started with our options and, when
 * traces are heard, the "Upstream calls" plugin.
 */
async function pageHtml(options: GraphiQLPageOptions): Promise<{ html: string; policy: string }> {
  const parts = await import('@graphql-yoga/render-graphiql/graphiql');
  const endpoint = options.endpoint ?? '/graphql';
  const settings: GraphiQLOptions = {
    title: 'Analytics GraphQL gateway',
    endpoint,
    defaultQuery: EXAMPLE_QUERY,
    ...(options.demoKey ? { headers: JSON.stringify({ Authorization: `Bearer ${options.demoKey}` }) } : {}),
    ...(options.traces ? { additionalHeaders: { [TRACE_HEADER]: '1' } } : {}),
  };
  const workers = { editorWorkerService: parts.editorWorkerService, json: parts.jsonWorker, graphql: parts.graphqlWorker };
  // Line ends as the browser's parser reads them, so that the hash below is of what it reads.
  const script = `
const workerUrls = Object.fromEntries(
  Object.entries(${inScript(workers)}).map(([label, code]) => [label, URL.createObjectURL(new Blob([code], { type: 'application/javascript' }))]),
);
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workerUrls[label] };
${parts.js};
${options.traces ? TRACE_PANEL_SCRIPT : ''}
const settings = ${inScript(settings)};
${
  options.traces
    ? `const plugins = gatewayTracePlugins(settings.endpoint);
if (plugins.length > 0) settings.plugins = plugins;`
    : ''
}
YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), settings);
`.replace(/\r\n?/g, '\n');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<title>${settings.title}</title>
<link rel="icon" href="${parts.favicon}" />
<style>${parts.css}</style>
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root"></div>
<script>${script}</script>
</body>
</html>
`;
  // The page's one script, named in its policy: the browser runs it and nothing else (http-headers.ts).
  return { html, policy: htmlPolicy([`sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}`]) };
}

async function render(options: GraphiQLPageOptions): Promise<RenderedPage> {
  const { html, policy } = await pageHtml(options);
  const identity = Buffer.from(html, 'utf8');
  const [br, gzipped] = await Promise.all([
    // Quality 9 of 11: near the best ratio at a fraction of its time.
    brotli(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    gzipAsync(identity, { level: 9 }),
  ]);
  const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
  // Views, not copies: the Fetch API's Response takes a Uint8Array over an ArrayBuffer.
  const view = (buffer: Buffer): Uint8Array<ArrayBuffer> =>
    new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.byteLength);
  return { etag, policy, bodies: { identity: view(identity), br: view(br), gzip: view(gzipped) } };
}

/** The encoding to send: brotli, then gzip, when the browser accepts it (a q of 0 refuses it). */
export function chooseEncoding(acceptEncoding: string | null): 'br' | 'gzip' | 'identity' {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string): number => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

/** Serves GraphiQL to a browser's GET of the GraphQL endpoint (yoga's own GraphiQL stays off). */
export function useGraphiQLPage(options: GraphiQLPageOptions = {}): Plugin {
  const endpoint = options.endpoint ?? '/graphql';
  let page: Promise<RenderedPage> | undefined;
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (!wantsGraphiQLPage(request.method, request.headers.get('accept'), url.pathname, endpoint)) return;
      page ??= render(options).catch((error: unknown) => {
        page = undefined; // try again on the next view
        throw error;
      });
      const { etag, policy, bodies } = await page;
      // The page may carry the demo key: private. Revalidated on each visit, answered 304 when unchanged.
      const headers: Record<string, string> = {
        etag,
        'cache-control': 'private, no-cache',
        vary: 'Accept-Encoding',
        'content-security-policy': policy,
      };
      if (ifNoneMatchHas(request.headers.get('if-none-match'), etag)) {
        endResponse(new fetchAPI.Response(null, { status: 304, headers }));
        return;
      }
      const encoding = chooseEncoding(request.headers.get('accept-encoding'));
      if (encoding !== 'identity') headers['content-encoding'] = encoding;
      endResponse(
        new fetchAPI.Response(bodies[encoding], {
          status: 200,
          headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(bodies[encoding].length) },
        }),
      );
    },
  };
}
