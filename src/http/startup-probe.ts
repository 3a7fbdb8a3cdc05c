// The start-up probe: one request without a key to the upstream's websites list, so that a wrong
// UPSTREAM_URL shows in the first lines of the log instead of at the first query. An install answers
// it with JSON (a 401 without a key); a refused connection, a DNS or TLS failure, a 404 or an HTML page
// says the address is not the analytics API. It only warns: the upstream may be down for a while and the
// gateway still answers from its cache, so it never keeps the gateway from starting.
import { request } from 'undici';

/** Why `baseUrl` (UPSTREAM_URL, without `/api/v1`) does not answer like the analytics API, or null when it does. */
export async function probeUpstream(baseUrl: string, timeoutMs = 5_000): Promise<string | null> {
  const base = new URL(baseUrl);
  const address = `${base.hostname}:${base.port || (base.protocol === 'https:' ? '443' : '80')}`;
  const url = `${base.origin}${base.pathname.replace(/\/+$/, '')}/api/v1/websites`;
  try {
    const response = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const type = String(response.headers['content-type'] ?? '');
    const start = (await response.body.text()).trimStart().slice(0, 1);
    if (response.statusCode === 404) return `${url} answered 404: not the analytics API (check UPSTREAM_URL's path)`;
    if (type.includes('html') || start === '<') return `${url} answered an HTML page (HTTP ${response.statusCode}), not the analytics API`;
    if (response.statusCode >= 500) return `${url} answered HTTP ${response.statusCode}: the install is failing`;
    return null;
  } catch (error) {
    const code = error instanceof Error ? ((error as { code?: unknown }).code ?? error.name) : 'unknown';
    return `${address} cannot be reached (${String(code)})`;
  }
}
