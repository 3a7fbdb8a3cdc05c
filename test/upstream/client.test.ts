// The upstream client alone, with undici's MockAgent for what a real server cannot easily do.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createUpstreamClient, parseRetryAfter, pathWithQuery, type UpstreamRequest } from '../../src/upstream/client.js';

const ORIGIN = 'http://analytics.test';
let agent: MockAgent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
});

/** The MockAgent of the current test: call client() first. */
function mockAgent(): MockAgent {
  if (agent === undefined) throw new Error('no MockAgent: call client() first');
  return agent;
}

function client(attempts: string[] = []) {
  const mock = new MockAgent();
  mock.disableNetConnect();
  agent = mock;
  return createUpstreamClient({
    url: `${ORIGIN}/stats-app`,
    dispatcher: mock,
    connectTimeoutMs: 1_000,
    timeoutMs: 1_000,
    connections: 1,
    maxAttempts: 3,
    maxResponseBytes: 1_024,
    breakerResetMs: 1_000,
    onAttemptDone: (request) => attempts.push(`${request.method} ${request.path}`),
  });
}

const request = (overrides: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  method: 'GET',
  path: '/websites/1',
  authorization: 'Bearer k',
  deadline: Date.now() + 5_000,
  ...overrides,
});

const dnsFailure = () => Object.assign(new Error('getaddrinfo ENOTFOUND analytics.test'), { code: 'ENOTFOUND' });

describe('upstream client', () => {
  it('keeps the install path prefix and sends the headers of the contract', async () => {
    const upstream = client();
    let seen: Record<string, string> = {};
    mockAgent()
      .get(ORIGIN)
      .intercept({ path: '/stats-app/api/v1/websites?page=2', method: 'GET' })
      .reply(200, (options) => {
        seen = options.headers as Record<string, string>;
        return { data: [] };
      });
    const response = await upstream.send(request({ path: '/websites', query: { page: '2', search: undefined } }));
    expect(response).toEqual({ status: 200, body: { data: [] } });
    expect(seen).toMatchObject({ accept: 'application/json', authorization: 'Bearer k' });
    await upstream.close();
  });

  it('a DNS failure on a read is retried, then UPSTREAM_UNAVAILABLE', async () => {
    const attempts: string[] = [];
    const upstream = client(attempts);
    mockAgent().get(ORIGIN).intercept({ path: '/stats-app/api/v1/websites/1' }).replyWithError(dnsFailure()).times(3);
    const error = await upstream.send(request()).catch((e: unknown) => e);
    expect(isGatewayError(error, 'UPSTREAM_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toBe('The analytics service cannot be reached.');
    expect(attempts).toHaveLength(3);
    await upstream.close();
  });

  it('a DNS failure on a write is not retried, and the write is known not to have happened', async () => {
    const attempts: string[] = [];
    const upstream = client(attempts);
    mockAgent().get(ORIGIN).intercept({ path: '/stats-app/api/v1/websites', method: 'POST' }).replyWithError(dnsFailure());
    const error = await upstream.send(request({ method: 'POST', path: '/websites', form: { domain: 'a.com' } })).catch((e: unknown) => e);
    expect(isGatewayError(error, 'UPSTREAM_UNAVAILABLE')).toBe(true);
    expect((error as { extensions: Record<string, unknown> }).extensions.outcome).toBeUndefined();
    expect(attempts).toHaveLength(1);
    await upstream.close();
  });

  it('a reset on a write says the outcome is unknown', async () => {
    const upstream = client();
    mockAgent()
      .get(ORIGIN)
      .intercept({ path: '/stats-app/api/v1/websites/1', method: 'DELETE' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const error = await upstream.send(request({ method: 'DELETE' })).catch((e: unknown) => e);
    expect((error as { extensions: Record<string, unknown> }).extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      outcome: 'UNKNOWN',
    });
    await upstream.close();
  });

  it('refuses to start when the deadline has already passed', async () => {
    const upstream = client();
    const error = await upstream.send(request({ deadline: Date.now() - 1 })).catch((e: unknown) => e);
    expect(isGatewayError(error, 'UPSTREAM_TIMEOUT')).toBe(true);
    await upstream.close();
  });

  it('stops a body that keeps trickling in at the request deadline, though no pause reaches the timeout', async () => {
    // A real server: headers at once, then a chunk every 50 ms for 3 s, never a pause near the 1-s timeout.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":[');
      const timer = setInterval(() => res.write(' '), 50);
      const end = setTimeout(() => {
        clearInterval(timer);
        res.end(']}');
      }, 3_000);
      res.on('close', () => {
        clearInterval(timer);
        clearTimeout(end);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const upstream = createUpstreamClient({
      url: `http://127.0.0.1:${port}`,
      connectTimeoutMs: 1_000,
      timeoutMs: 1_000,
      connections: 1,
      maxAttempts: 3,
      maxResponseBytes: 1_024 * 1_024,
      breakerResetMs: 1_000,
    });
    try {
      const started = Date.now();
      const error = await upstream.send(request({ path: '/stats/1', deadline: started + 400 })).catch((e: unknown) => e);
      expect(isGatewayError(error, 'UPSTREAM_TIMEOUT')).toBe(true);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(400);
      expect(took).toBeLessThan(1_500);
    } finally {
      await upstream.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    const now = Date.parse('2026-03-15T10:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30);
    expect(parseRetryAfter(' 7 ', now)).toBe(7);
    expect(parseRetryAfter('Sun, 15 Mar 2026 10:00:42 GMT', now)).toBe(42);
    expect(parseRetryAfter('Sun, 15 Mar 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('pathWithQuery', () => {
  it('writes the query string URLSearchParams writes, leaving out undefined values', () => {
    const text = fc.oneof(fc.string(), fc.constantFrom('2026-03-15', 'visitor', 'a b', 'x&y=z', 'é', "~!'()*", '100'));
    fc.assert(
      fc.property(
        fc.dictionary(fc.oneof(fc.string({ minLength: 1 }), fc.constantFrom('per_page', 'sort by')), fc.option(text, { nil: undefined })),
        (query) => {
          const defined = Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined);
          const search = new URLSearchParams(defined).toString();
          expect(pathWithQuery('/stats/1', query)).toBe(search ? `/stats/1?${search}` : '/stats/1');
        },
      ),
      { numRuns: 500 },
    );
    expect(pathWithQuery('/websites', undefined)).toBe('/websites');
  });
});
