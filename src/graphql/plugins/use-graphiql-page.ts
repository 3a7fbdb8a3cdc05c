// The GraphiQL page, from our own dependencies (no CDN), compressed, with an ETag. The bundle is
// megabytes: it is loaded and rendered on the first view, not at start-up, and each encoding is
// compressed when first asked for; all are kept.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { TRACE_HEADER, htmlPolicy, ifNoneMatchHas, wantsGraphiQLPage } from '../../http-headers.js';
import { TRACE_PANEL_SCRIPT } from '../graphiql-trace-panel.js';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export interface GraphiQLPageOptions {
  endpoint?: string;
  /** Prefilled in the page's headers (sandbox mode only). */
  demoKey?: string;
  /** X-Gateway-Trace is heard: the page sends it and shows the calls (graphiql-trace-panel.ts). */
  traces?: boolean;
}

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

/** Nothing in it can close the script element. */
const inScript = (value: unknown): string => JSON.stringify(value).replaceAll('<', '\\u003c');

/** @graphql-yoga/render-graphiql's parts (the workers made blob: URLs as its own page does), our options. */
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
  // Line ends as the browser reads them, so that the hash is of what it reads.
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
  // The page's one script, named in its policy: the browser runs it and nothing else.
  return { html, policy: htmlPolicy([`sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}`]) };
}

type Encoding = ReturnType<typeof chooseEncoding>;
/** The rendered page, and each encoding of it asked for so far (a failed compression is not kept). */
export interface GraphiQLPage {
  etag: string;
  policy: string;
  bodies: Map<Encoding, Promise<Uint8Array<ArrayBuffer>>>;
}
const view = (buffer: Buffer): Uint8Array<ArrayBuffer> =>
  new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.byteLength);

export async function renderGraphiQLPage(options: GraphiQLPageOptions): Promise<GraphiQLPage> {
  const { html, policy } = await pageHtml(options);
  const identity = Buffer.from(html, 'utf8');
  const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
  return { etag, policy, bodies: new Map([['identity', Promise.resolve(view(identity))]]) };
}

/**
 * The page in an encoding, compressed when a client first asks for it, then kept: brotli takes about a
 * second of CPU on this 9 MB page and gzip a third, and a browser offers br over HTTPS, gzip over HTTP.
 */
export function pageBody(page: GraphiQLPage, encoding: Encoding): Promise<Uint8Array<ArrayBuffer>> {
  let body = page.bodies.get(encoding);
  if (!body) {
    body = (page.bodies.get('identity') as Promise<Uint8Array<ArrayBuffer>>)
      .then((identity) =>
        encoding === 'br'
          ? // Near brotli's best ratio at a fraction of its time.
            brotli(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } })
          : gzipAsync(identity, { level: 9 }),
      )
      .then(view, (error: unknown) => {
        page.bodies.delete(encoding);
        throw error;
      });
    page.bodies.set(encoding, body);
  }
  return body;
}

/** Brotli, then gzip, when the browser accepts it (a q of 0 refuses it). */
export function chooseEncoding(acceptEncoding: string | null): 'br' | 'gzip' | 'identity' {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string): number => accepted.get(name) ?? accepted.get('*') ?? 0;
  return weight('br') > 0 ? 'br' : weight('gzip') > 0 ? 'gzip' : 'identity';
}

export function useGraphiQLPage(options: GraphiQLPageOptions = {}): Plugin {
  const endpoint = options.endpoint ?? '/graphql';
  let page: Promise<GraphiQLPage> | undefined;
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (!wantsGraphiQLPage(request.method, request.headers.get('accept'), url.pathname, endpoint)) return;
      page ??= renderGraphiQLPage(options).catch((error: unknown) => {
        page = undefined;
        throw error;
      });
      const rendered = await page;
      const { etag, policy } = rendered;
      // The page may carry the demo key: private, revalidated on each visit.
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
      const body = await pageBody(rendered, encoding);
      endResponse(
        new fetchAPI.Response(body, {
          status: 200,
          headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) },
        }),
      );
    },
  };
}
