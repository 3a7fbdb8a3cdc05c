// The one ending (src/http/answer.ts): the three ways a query is answered (yoga, the known operations'
// compiled path, a stored answer) give the same status, headers, data, extensions and log fields, over
// real HTTP, by POST and by GET, with and without an allowed Origin. The reads behind the query are in
// the read cache before it runs, so that every way reports the same usage: every read a hit.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_1, startStack, type Stack } from '../fixture.js';

const RANGE = 'from: "2026-02-14", to: "2026-03-01"';
/**
 * The query. The same text with other `extensions` (which yoga ignores) is a request of its own for the
 * stored answers, and the same form for the known operations' path.
 */
const query = (name: string): string => `query ${name} { website(id: "1") { id domain
  pages: stats(name: PAGE, ${RANGE}, perPage: 10) { nodes { value count } totalCount } } }`;
/** Another document reading the same: it fills the read cache. */
const WARM = `query Warm { website(id: "1") { domain pages: stats(name: PAGE, ${RANGE}, perPage: 10) { totalCount } } }`;

/** What a client or a cache reads of an answer; `max-age` without its value (it counts down). */
const READ_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'vary',
  'etag',
  'x-content-type-options',
  'referrer-policy',
  'access-control-allow-origin',
  'access-control-expose-headers',
];

interface Seen {
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}

describe('one ending for every answer', () => {
  let stack: Stack;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = pino(
      { level: 'info', base: null },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );
    stack = await startStack({ env: { CACHE: 'on', CORS_ORIGINS: 'https://app.example', LOG_LEVEL: 'info' }, gateway: { logger } });
  });
  afterAll(() => stack?.close());

  const send = async (method: 'GET' | 'POST', client: number, origin: string | undefined, document: string): Promise<Seen> => {
    const headers: Record<string, string> = { authorization: `Bearer ${KEY_1}`, accept: 'application/graphql-response+json' };
    if (origin !== undefined) headers.origin = origin;
    const extensions = { client };
    const response =
      method === 'GET'
        ? await fetch(`${stack.endpoint}?${new URLSearchParams({ query: document, extensions: JSON.stringify(extensions) })}`, { headers })
        : await fetch(stack.endpoint, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ query: document, extensions }),
          });
    const read = Object.fromEntries(READ_HEADERS.map((name) => [name, response.headers.get(name)]));
    read['cache-control'] = read['cache-control']?.replace(/max-age=\d+/, 'max-age=N') ?? null;
    return { status: response.status, headers: read, body: JSON.parse(await response.text()) };
  };

  /** The log line of the last request, without what differs by nature: its duration, its time, how it was answered. */
  const lastLine = (): Record<string, unknown> => {
    const { durationMs, time, storedAnswer, ...rest } = lines.at(-1) ?? {};
    expect(durationMs).toBeTypeOf('number');
    return rest;
  };

  /** A value of `extensions.client` no request sent before, and a case's own operation name. */
  let unused = 0;
  let cases = 0;
  it.each([
    ['POST', undefined],
    ['POST', 'https://app.example'],
    ['GET', undefined],
    ['GET', 'https://app.example'],
    ['POST', 'https://elsewhere.example'],
  ] as const)('%s with Origin %s: yoga, a known operation and a stored answer answer alike', async (method, origin) => {
    await send('POST', 0, undefined, WARM);
    // Yoga's first run of a form of its own; the same form with another value, by the known operations'
    // path; that request again, from its stored answer.
    const document = query(`Parity${++cases}`);
    const byYoga = await send(method, ++unused, origin, document);
    const yogaLine = lastLine();
    const known = await send(method, ++unused, origin, document);
    const knownLine = lastLine();
    const stored = await send(method, unused, origin, document);
    expect(lines.at(-1)?.storedAnswer).toBe(true);
    const storedLine = lastLine();

    expect(byYoga.status).toBe(200);
    expect(byYoga.body).toMatchObject({ data: { website: { id: '1' } }, extensions: { upstreamCalls: 0, cache: { misses: 0 } } });
    expect(known).toEqual(byYoga);
    expect(stored).toEqual(byYoga);
    expect(knownLine).toEqual(yogaLine);
    expect(storedLine).toEqual(yogaLine);
    expect(byYoga.headers['cache-control']).toBe('private, max-age=N');
    expect(byYoga.headers.etag === null).toBe(method === 'POST');
    expect(byYoga.headers['access-control-allow-origin']).toBe(origin === 'https://app.example' ? origin : null);
  });

  it('a GET that sends its ETag back gets a 304 by every way', async () => {
    await send('POST', 0, undefined, WARM);
    const document = query('Conditional');
    const first = await send('GET', ++unused, undefined, document);
    const etag = first.headers.etag as string;
    const conditional = async (value: number, sent = document): Promise<number> => {
      const extensions = JSON.stringify({ client: value });
      const response = await fetch(`${stack.endpoint}?${new URLSearchParams({ query: sent, extensions })}`, {
        headers: { authorization: `Bearer ${KEY_1}`, accept: 'application/graphql-response+json', 'if-none-match': etag },
      });
      expect(await response.text()).toBe('');
      return response.status;
    };
    // By yoga (a form of its own: the same data), by the known path, then from the stored answer.
    expect(first.status).toBe(200);
    expect(await conditional(++unused, query('ConditionalAgain'))).toBe(304);
    expect(await conditional(++unused)).toBe(304);
    expect(await conditional(unused)).toBe(304);
  });
});
