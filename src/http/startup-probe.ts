// One keyless request to the upstream's websites list, so that a wrong UPSTREAM_URL shows in the first
// lines of the log. An install answers JSON (a 401); anything else is not the analytics API. It only
// warns: the gateway answers from its cache while the upstream is down.
import { request } from 'undici';

/** Why `baseUrl` (without `/api/v1`) does not answer like the analytics API, or null. */
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
