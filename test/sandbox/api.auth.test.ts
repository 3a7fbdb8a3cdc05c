// Bearer keys and per-user isolation: a missing or unknown key is a 401; another user's website
// is a 404 on every operation and never changes or leaks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { KEY_1, KEY_2, TODAY, call, statsPath } from './http.js';
import type { WirePage, WireWebsite } from './http.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
});
afterEach(async () => {
  await sandbox.close();
});

const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const ROUTES: [string, string, Record<string, string>?][] = [
  ['GET', '/api/v1/websites'],
  ['POST', '/api/v1/websites', { domain: 'new.example.com' }],
  ['GET', '/api/v1/websites/1'],
  ['PUT', '/api/v1/websites/1', { favorite: '1' }],
  ['PATCH', '/api/v1/websites/1', { favorite: '1' }],
  ['DELETE', '/api/v1/websites/1'],
  ['GET', statsPath(1, 'visitor', '2026-03-01', TODAY)],
];

describe('authentication', () => {
  it('exposes the two demo keys', () => {
    expect(sandbox.keys).toEqual([KEY_1, KEY_2]);
  });

  it.each([
    ['no Authorization header', {}],
    ['an unknown key', { authorization: 'Bearer sandbox-key-3' }],
    ['another scheme', { authorization: `Basic ${KEY_1}` }],
    ['the key without a scheme', { authorization: KEY_1 }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 to every operation with %s, and changes nothing', async (_label, headers) => {
    for (const [method, path, form] of ROUTES) {
      const reply = await call(sandbox, path, { method, key: null, headers, form });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.body).toEqual({ message: 'Unauthenticated.' });
    }
    const page = await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites');
    expect(page.body.meta.total).toBe(7);
    expect(page.body.data.find((website) => website.id === 1)?.favorite).toBe(1);
  });

  it('reads the scheme case-insensitively', async () => {
    expect((await call(sandbox, '/api/v1/websites', { key: null, headers: { authorization: `bearer ${KEY_2}` } })).status).toBe(200);
  });

  it('matches the route before the key: an unknown route is a 404 even without one', async () => {
    expect((await call(sandbox, '/api/v1/unknown', { key: null })).status).toBe(404);
  });
});

describe('isolation between the two users', () => {
  it('lists only the caller’s websites', async () => {
    const mine = await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites', { key: KEY_2 });
    expect(mine.body.data.map((website) => website.id)).toEqual([9, 6, 3]);
    expect(mine.body.data.map((website) => website.domain)).toEqual(['greenleaf-recipes.com', 'harborlight.org', 'pixelforge.io']);
    const theirs = await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites?per_page=100', { key: KEY_1 });
    expect(theirs.body.data.map((website) => website.id)).not.toContain(3);
    expect(theirs.body.meta.total).toBe(7);
    expect((await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites?search=pixel')).body.data).toEqual([]);
  });

  it.each([
    [KEY_1, 3],
    [KEY_1, 6],
    [KEY_2, 1],
    [KEY_2, 10],
  ])('with %s, website %i is a 404 on every operation and stays untouched', async (key, id) => {
    const owner = key === KEY_1 ? KEY_2 : KEY_1;
    const before = await call(sandbox, `/api/v1/websites/${id}`, { key: owner });
    expect(before.status).toBe(200);
    const attempts: [string, string, Record<string, string>?][] = [
      ['GET', `/api/v1/websites/${id}`],
      ['PUT', `/api/v1/websites/${id}`, { favorite: '1', privacy: '1' }],
      ['PATCH', `/api/v1/websites/${id}`, { email: '1', exclude_params: '' }],
      ['PATCH', `/api/v1/websites/${id}`, { privacy: 'invalid' }], // a 404, not a 422: nothing about it is revealed
      ['DELETE', `/api/v1/websites/${id}`],
      ['GET', statsPath(id, 'visitor', '2026-03-01', TODAY)],
      ['GET', `/api/v1/stats/${id}?name=bogus`],
    ];
    for (const [method, path, form] of attempts) {
      const reply = await call(sandbox, path, { method, key, form });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual(NOT_FOUND);
    }
    expect((await call(sandbox, `/api/v1/websites/${id}`, { key: owner })).body).toEqual(before.body);
  });

  it('keeps a website created by one user invisible to the other', async () => {
    const created = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites', {
      method: 'POST',
      key: KEY_2,
      form: { domain: 'user-two.example.net' },
    });
    expect(created.body.data.id).toBe(11);
    expect((await call(sandbox, '/api/v1/websites/11', { key: KEY_1 })).status).toBe(404);
    expect((await call(sandbox, '/api/v1/websites/11', { key: KEY_2 })).status).toBe(200);
    expect((await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites', { key: KEY_2 })).body.meta.total).toBe(4);
    expect((await call<WirePage<WireWebsite>>(sandbox, '/api/v1/websites', { key: KEY_1 })).body.meta.total).toBe(7);
  });
});
