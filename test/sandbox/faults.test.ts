// Scripted faults: each of the next /api/v1 requests consumes one, in order, before auth and
// normal handling; scripted from code or over POST /__sandbox/faults.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, ScriptedFault } from '../../src/sandbox/index.js';
import { KEY_1, TODAY, call } from './http.js';
import type { WirePage, WirePlainPage, WireWebsite } from './http.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
});
afterEach(async () => {
  await sandbox.close();
});

const raw = (path = '/api/v1/websites', signal?: AbortSignal) =>
  fetch(sandbox.url + path, { headers: { authorization: `Bearer ${KEY_1}` }, signal });
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('status faults', () => {
  it('answers the scripted statuses in order, then normally again', async () => {
    sandbox.scriptFaults([
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
    ]);
    const first = await call(sandbox, '/api/v1/websites');
    expect(first.status).toBe(502);
    expect(first.body).toEqual({ message: 'Bad Gateway' });
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(503);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(200);
  });

  it('sends the given body and headers, e.g. a 429 with Retry-After', async () => {
    sandbox.scriptFaults([
      { kind: 'status', status: 429, headers: { 'Retry-After': '1' } },
      { kind: 'status', status: 504, body: 'upstream timed out', headers: { 'x-extra': 'yes' } },
    ]);
    const limited = await call(sandbox, '/api/v1/websites');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.body).toEqual({ message: 'Too Many Attempts.' });
    const timedOut = await call(sandbox, '/api/v1/websites');
    expect(timedOut.status).toBe(504);
    expect(timedOut.text).toBe('upstream timed out');
    expect(timedOut.headers.get('content-type')).toContain('text/plain');
    expect(timedOut.headers.get('x-extra')).toBe('yes');
  });

  it('skips auth: a request without a key still gets the fault', async () => {
    sandbox.scriptFaults([{ kind: 'status', status: 500 }]);
    expect((await call(sandbox, '/api/v1/websites', { key: null })).status).toBe(500);
    expect((await call(sandbox, '/api/v1/websites', { key: null })).status).toBe(401);
  });

  it('is consumed by /api/v1 requests only', async () => {
    sandbox.scriptFaults([{ kind: 'status', status: 502 }]);
    expect((await call(sandbox, '/__sandbox/health')).status).toBe(200);
    expect((await call(sandbox, '/elsewhere')).status).toBe(404);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(502);
  });
});

describe('broken answers', () => {
  it('html500: a 500 with an HTML page', async () => {
    sandbox.scriptFaults([{ kind: 'html500' }]);
    const reply = await call(sandbox, '/api/v1/websites');
    expect(reply.status).toBe(500);
    expect(reply.headers.get('content-type')).toContain('text/html');
    expect(reply.text).toMatch(/^<!DOCTYPE html>/);
  });

  it('hang: never answers; the client gives up and the log records status 0', async () => {
    sandbox.scriptFaults([{ kind: 'hang' }]);
    await expect(raw('/api/v1/websites', AbortSignal.timeout(200))).rejects.toThrow();
    await settle();
    expect(sandbox.log.entries[0]?.status).toBe(0);
    expect(sandbox.log.entries[0]?.endedAt).not.toBeNull();
    expect(sandbox.log.inFlight).toBe(0);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(200);
  });

  it('hang: close() ends hanging requests instead of waiting for them', async () => {
    sandbox.scriptFaults([{ kind: 'hang' }, { kind: 'hang' }]);
    const pending = [raw(), raw()].map((request) =>
      request.then(
        () => 'answered',
        () => 'failed',
      ),
    );
    while (sandbox.log.inFlight < 2) await settle(); // both arrived (the test's timeout is the safety net)
    expect(sandbox.log.inFlight).toBe(2);
    await sandbox.close(); // a close that waited for them would never end: the test's timeout
    expect(await Promise.all(pending)).toEqual(['failed', 'failed']);
  });

  it('reset: headers and part of a body, then the connection drops', async () => {
    sandbox.scriptFaults([{ kind: 'reset' }]);
    const read = async () => (await raw()).text();
    await expect(read()).rejects.toThrow();
    await settle();
    expect(sandbox.log.entries[0]?.status).toBe(0);
  });

  it('truncated: a complete-looking answer whose JSON is cut short', async () => {
    sandbox.scriptFaults([{ kind: 'truncated' }]);
    const response = await raw();
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text.startsWith('{"data":[{')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });

  it('malformed: a 200 whose body is not JSON', async () => {
    sandbox.scriptFaults([{ kind: 'malformed' }]);
    const reply = await call(sandbox, '/api/v1/websites');
    expect(reply.status).toBe(200);
    expect(reply.text.length).toBeGreaterThan(0);
    expect(() => JSON.parse(reply.text)).toThrow(SyntaxError);
  });

  it('oversize: a valid JSON body of about the size asked for', async () => {
    sandbox.scriptFaults([{ kind: 'oversize', bytes: 2_000_000 }]);
    const response = await raw();
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(Math.abs(Buffer.byteLength(text) - 2_000_000)).toBeLessThan(100);
    expect(JSON.parse(text)).toMatchObject({ data: [], status: 200 });
  });

  it('delay: answers normally, after the delay', async () => {
    sandbox.scriptFaults([{ kind: 'delay', ms: 200 }]);
    const started = performance.now();
    const reply = await call<{ data: { id: number } }>(sandbox, '/api/v1/websites/1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    expect(reply.status).toBe(200);
    expect(reply.body.data.id).toBe(1);
    // Normal handling includes auth.
    sandbox.scriptFaults([{ kind: 'delay', ms: 10 }]);
    expect((await call(sandbox, '/api/v1/websites/1', { key: null })).status).toBe(401);
  });
});

describe('lies (and less) in real answers', () => {
  const STATS = '/api/v1/stats/1?name=visitor&from=2026-01-01&to=2026-03-15&per_page=25&page=2';
  const LEGACY_STATS = '/api/v1/stats/1?name=visitors&from=2026-01-01&to=2026-03-15&per_page=25&page=2';

  it('pageCount: a stats page of the resource collection claims that many full pages; its rows are the real ones', async () => {
    const real = await call<WirePage<unknown>>(sandbox, STATS);
    expect(real.body.meta.last_page).toBe(3);
    sandbox.scriptFaults([{ kind: 'pageCount', lastPage: 20_000 }]);
    const lying = await call<WirePage<unknown>>(sandbox, STATS);
    expect(lying.status).toBe(200);
    expect(lying.body.data).toEqual(real.body.data);
    expect(lying.body.meta).toEqual({ ...real.body.meta, last_page: 20_000, total: 20_000 * 25 });
    const path = real.body.meta.path;
    expect(lying.body.links).toEqual({ ...real.body.links, last: `${path}?page=20000`, next: `${path}?page=3` });
    // Used up: the next answer is the real one.
    expect((await call(sandbox, STATS)).body).toEqual(real.body);
  });

  it("pageCount: the older install's plain paginator claims it in its numbers, URLs and buttons", async () => {
    const legacy = await startSandbox({ port: 0, today: TODAY, dialect: 'legacy' });
    try {
      const real = await call<WirePlainPage<unknown>>(legacy, LEGACY_STATS);
      expect(real.body.last_page).toBe(3);
      legacy.scriptFaults([{ kind: 'pageCount', lastPage: 20_000 }]);
      const lying = await call<WirePlainPage<unknown>>(legacy, LEGACY_STATS);
      const { path } = real.body;
      expect(lying.body).toMatchObject({
        data: real.body.data,
        current_page: 2,
        per_page: '25',
        last_page: 20_000,
        total: 20_000 * 25,
        last_page_url: `${path}?page=20000`,
        next_page_url: `${path}?page=3`,
      });
      expect(lying.body.links.map((link) => link.label).slice(-5)).toEqual(['10', '...', '19999', '20000', 'Next &raquo;']);
    } finally {
      await legacy.close();
    }
  });

  it('pageCount: the websites list lies too; an answer that is not a page goes out unchanged, the fault used up', async () => {
    sandbox.scriptFaults([
      { kind: 'pageCount', lastPage: 7 },
      { kind: 'pageCount', lastPage: 7 },
    ]);
    const list = await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites?per_page=10');
    expect(list.body.meta).toMatchObject({ last_page: 7, total: 70, current_page: 1 });
    expect(list.body.data.length).toBeLessThan(10);
    const website = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1');
    expect(website.body).toEqual((await call(sandbox, '/api/v1/websites/1')).body);
    expect((await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites?per_page=10')).body.meta.last_page).toBe(1);
  });

  it('noPaging: a page goes out as its rows alone, in either envelope; other answers unchanged', async () => {
    const real = await call<WirePage<unknown>>(sandbox, STATS);
    sandbox.scriptFaults([{ kind: 'noPaging' }, { kind: 'noPaging' }]);
    expect((await call(sandbox, STATS)).body).toEqual({ data: real.body.data });
    expect((await call(sandbox, '/api/v1/websites/1')).body).toEqual((await call(sandbox, '/api/v1/websites/1')).body);
    const legacy = await startSandbox({ port: 0, today: TODAY, dialect: 'legacy' });
    try {
      const plain = await call<WirePlainPage<unknown>>(legacy, LEGACY_STATS);
      legacy.scriptFaults([{ kind: 'noPaging' }]);
      expect((await call(legacy, LEGACY_STATS)).body).toEqual({ data: plain.body.data });
    } finally {
      await legacy.close();
    }
  });

  it('pageCount and websiteId are told whatever faultRate says, with the key checked', async () => {
    sandbox.setKnobs({ faultRate: 1 });
    sandbox.scriptFaults([
      { kind: 'pageCount', lastPage: 5 },
      { kind: 'websiteId', id: 4 },
      { kind: 'websiteId', id: 4 },
    ]);
    expect((await call<WirePage<unknown>>(sandbox, STATS)).body.meta.last_page).toBe(5);
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1')).body.data.id).toBe(4);
    expect((await call(sandbox, '/api/v1/websites/1', { key: null })).status).toBe(401);
  });

  it("websiteId: a website's answer names another id; the rest of the record is the one asked for", async () => {
    const real = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1');
    sandbox.scriptFaults([{ kind: 'websiteId', id: 2 }]);
    const lying = await call<{ data: WireWebsite; status: number }>(sandbox, '/api/v1/websites/1');
    expect(lying.status).toBe(200);
    expect(lying.body).toEqual({ ...real.body, data: { ...real.body.data, id: 2 } });
  });

  it('websiteId: an update is applied to the website asked for and answered with the other id; a delete too', async () => {
    sandbox.scriptFaults([{ kind: 'websiteId', id: 2 }]);
    const updated = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1', { method: 'PATCH', form: { privacy: '1' } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: 2, privacy: 1 });
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1')).body.data).toMatchObject({ id: 1, privacy: 1 });
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/2')).body.data.privacy).toBe(0);

    sandbox.scriptFaults([
      { kind: 'websiteId', id: 2 },
      { kind: 'websiteId', id: 2 },
    ]);
    const deleted = await call(sandbox, '/api/v1/websites/4', { method: 'DELETE' });
    expect(deleted.body).toEqual({ id: 2, object: 'website', deleted: true, status: 200 });
    expect((await call(sandbox, '/api/v1/websites/4')).status).toBe(404); // used up, unchanged: a 404 names no website
    expect((await call(sandbox, '/api/v1/websites/2')).status).toBe(200);
  });
});

describe('scripting over HTTP', () => {
  it('POST /__sandbox/faults queues faults and answers 204', async () => {
    const faults: ScriptedFault[] = [{ kind: 'status', status: 503 }, { kind: 'malformed' }];
    const reply = await call(sandbox, '/__sandbox/faults', { method: 'POST', key: null, json: faults });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(503);
    const malformed = await call(sandbox, '/api/v1/websites');
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow(SyntaxError);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(200);
  });

  it.each([
    [{ kind: 'status', status: 503 }],
    [[{ kind: 'explode' }]],
    [[{ kind: 'status', status: 99 }]],
    [[{ kind: 'status', status: 500, headers: { a: 1 } }]],
    [[{ kind: 'oversize', bytes: -1 }]],
    [[{ kind: 'delay' }]],
    [[{ kind: 'pageCount', lastPage: 0 }]],
    [[{ kind: 'pageCount', lastPage: 2.5 }]],
    [[{ kind: 'websiteId' }]],
    [[{ kind: 'websiteId', id: '2' }]],
  ])('rejects %j with a 400 and queues nothing', async (body) => {
    const reply = await call<{ message: string }>(sandbox, '/__sandbox/faults', { method: 'POST', key: null, json: body });
    expect(reply.status).toBe(400);
    expect(reply.body.message.length).toBeGreaterThan(0);
    expect((await call(sandbox, '/api/v1/websites')).status).toBe(200);
  });

  it('rejects bad faults from code', () => {
    expect(() => sandbox.scriptFaults([{ kind: 'oversize', bytes: 1.5 }])).toThrow(TypeError);
  });
});
