// The five website operations over real HTTP: every parameter, validation rule and error shape.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { KEY_2, TODAY, call } from './http.js';
import type { ErrorBody, WirePage, WireWebsite } from './http.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, today: TODAY });
});
afterEach(async () => {
  await sandbox.close();
});

const list = (query = '', key?: string) => call<WirePage<WireWebsite>>(sandbox, `/api/v1/websites${query}`, { key });
const ids = (page: WirePage<WireWebsite>): number[] => page.data.map((website) => website.id);
const store = (form: Record<string, string>) =>
  call<{ data: WireWebsite; status: number }>(sandbox, '/api/v1/websites', { method: 'POST', form });
const update = (id: number, form: Record<string, string>, method = 'PATCH') =>
  call<{ data: WireWebsite; status: number }>(sandbox, `/api/v1/websites/${id}`, { method, form });
const show = (id: number | string) => call<{ data: WireWebsite; status: number }>(sandbox, `/api/v1/websites/${id}`);
const invalid = (fields: Record<string, string[]>): ErrorBody => ({ message: fields, status: 422 });
const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('GET /api/v1/websites', () => {
  it('lists the caller’s websites newest first in a Laravel envelope', async () => {
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    const path = `${sandbox.url}/api/v1/websites`;
    expect(ids(reply.body)).toEqual([10, 8, 7, 5, 4, 2, 1]);
    expect(reply.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=1`, prev: null, next: null });
    expect(reply.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 10, to: 7, total: 7 });
    expect(reply.body.status).toBe(200);
  });

  it('sorts by id or domain, in either direction', async () => {
    expect(ids((await list('?sort_by=id&sort=asc')).body)).toEqual([1, 2, 4, 5, 7, 8, 10]);
    const domains = (await list('?sort_by=domain&sort=asc')).body.data.map((w) => w.domain);
    expect(domains).toEqual([
      '198.51.100.42',
      'acme-analytics.com',
      'blog.acme-analytics.com',
      'docs.acme-analytics.com',
      'northwind-outfitters.com',
      'status.acme-analytics.com',
      'tailspin-travel.com',
    ]);
    expect((await list('?sort_by=domain&sort=desc')).body.data.map((w) => w.domain)).toEqual([...domains].reverse());
    expect(ids((await list('?sort_by=domain')).body)[0]).toBe(7); // sort defaults to desc
  });

  it('searches domains case-insensitively, by substring', async () => {
    expect(ids((await list('?search=ACME')).body)).toEqual([8, 4, 2, 1]);
    expect(ids((await list('?search=acme&search_by=domain')).body)).toEqual([8, 4, 2, 1]);
    expect(ids((await list('?search=outfit')).body)).toEqual([5]);
    const none = await list('?search=zzz');
    expect(none.body.data).toEqual([]);
    expect(none.body.meta).toMatchObject({ total: 0, from: null, to: null, last_page: 1, current_page: 1 });
    expect(none.body.links.next).toBeNull();
  });

  it('filters on favorite with 1/0/true/false', async () => {
    expect(ids((await list('?favorite=1')).body)).toEqual([5, 1]);
    expect(ids((await list('?favorite=true')).body)).toEqual([5, 1]);
    expect(ids((await list('?favorite=0')).body)).toEqual([10, 8, 7, 4, 2]);
    expect(ids((await list('?favorite=false')).body)).toEqual([10, 8, 7, 4, 2]);
    expect(ids((await list('?favorite=1&search=acme')).body)).toEqual([1]);
  });

  it('treats empty parameters as absent', async () => {
    expect(ids((await list('?search=&sort_by=&sort=&per_page=&favorite=&page=')).body)).toEqual([10, 8, 7, 5, 4, 2, 1]);
  });

  it('paginates with per_page 10, 25, 50, 100 and a 1-based page', async () => {
    for (let i = 0; i < 5; i++) expect((await store({ domain: `extra-${i}.example.com` })).status).toBe(201);
    const path = `${sandbox.url}/api/v1/websites`;
    const first = await list('?sort=asc');
    expect(first.body.data).toHaveLength(10);
    expect(first.body.meta).toEqual({ current_page: 1, from: 1, last_page: 2, path, per_page: 10, to: 10, total: 12 });
    expect(first.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=2`, prev: null, next: `${path}?page=2` });
    const second = await list('?sort=asc&page=2');
    expect(ids(second.body)).toEqual([14, 15]);
    expect(second.body.meta).toMatchObject({ current_page: 2, from: 11, to: 12, total: 12, last_page: 2 });
    expect(second.body.links).toMatchObject({ prev: `${path}?page=1`, next: null });
    const past = await list('?sort=asc&page=3');
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toEqual({ current_page: 3, from: null, last_page: 2, path, per_page: 10, to: null, total: 12 });
    expect(past.body.links).toMatchObject({ prev: `${path}?page=2`, next: null });
    for (const perPage of [25, 50, 100]) {
      const page = await list(`?per_page=${perPage}`);
      expect(page.body.data).toHaveLength(12);
      expect(page.body.meta).toMatchObject({ per_page: perPage, last_page: 1 });
    }
    // Laravel's paginator reads a page that is not an integer >= 1 as page 1.
    expect((await list('?page=0')).body.meta.current_page).toBe(1);
    expect((await list('?page=abc')).body.meta.current_page).toBe(1);
  });

  it('rejects other values of per_page, sort_by, sort, search_by and favorite with a field map', async () => {
    expect((await list('?per_page=5')).status).toBe(422);
    expect((await list('?per_page=5')).body).toEqual(invalid({ per_page: ['The selected per page is invalid.'] }));
    expect((await list('?per_page=ten')).body).toEqual(invalid({ per_page: ['The selected per page is invalid.'] }));
    expect((await list('?sort_by=created_at')).body).toEqual(invalid({ sort_by: ['The selected sort by is invalid.'] }));
    expect((await list('?sort=up')).body).toEqual(invalid({ sort: ['The selected sort is invalid.'] }));
    expect((await list('?search=a&search_by=id')).body).toEqual(invalid({ search_by: ['The selected search by is invalid.'] }));
    expect((await list('?favorite=maybe')).body).toEqual(invalid({ favorite: ['The favorite field must be true or false.'] }));
    const many = await list('?per_page=7&sort=sideways&sort_by=size');
    expect(many.status).toBe(422);
    expect(Object.keys(many.body as unknown as Record<string, unknown>)).toEqual(['message', 'status']);
    expect((many.body as unknown as ErrorBody).message).toEqual({
      sort_by: ['The selected sort by is invalid.'],
      sort: ['The selected sort is invalid.'],
      per_page: ['The selected per page is invalid.'],
    });
  });
});

describe('GET /api/v1/websites/{id}', () => {
  it('shows one website with flags as 0/1, password as "is one set" and Laravel timestamps', async () => {
    const reply = await show(1);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      data: {
        id: 1,
        domain: 'acme-analytics.com',
        privacy: 0,
        email: 1,
        password: false,
        exclude_bots: 1,
        exclude_params: 'utm_source\nutm_medium\nfbclid',
        exclude_ips: null,
        favorite: 1,
        created_at: '2022-12-01T17:40:00.000000Z',
        updated_at: '2022-12-31T17:52:34.000000Z',
      },
      status: 200,
    });
  });

  it('says whether a password is set without ever sending it', async () => {
    const reply = await show(4);
    expect(reply.body.data).toMatchObject({ domain: 'docs.acme-analytics.com', privacy: 2, password: true });
    expect(reply.text).not.toContain('docs-preview');
  });

  it('answers 404 for unknown, non-numeric and other users’ ids', async () => {
    for (const id of ['999', 'abc', '3', '1.5', '-1']) {
      const reply = await show(id);
      expect(reply.status, id).toBe(404);
      expect(reply.body, id).toEqual(NOT_FOUND);
    }
  });
});

describe('POST /api/v1/websites', () => {
  it('stores a website with the upstream defaults and answers 201', async () => {
    const reply = await store({ domain: 'https://www.New-Site.Example.com/landing?x=1' });
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe(201);
    const website = reply.body.data;
    expect(website).toMatchObject({
      id: 11,
      domain: 'new-site.example.com',
      privacy: 0,
      email: 0,
      password: false,
      exclude_bots: 1,
      exclude_params: null,
      exclude_ips: null,
      favorite: 0,
    });
    expect(website.created_at).toMatch(TIMESTAMP);
    expect(website.created_at.slice(0, 10)).toBe(TODAY);
    expect(website.updated_at).toBe(website.created_at);
    expect((await show(11)).body.data).toEqual(website);
    expect(ids((await list()).body)[0]).toBe(11);
  });

  it('accepts every field, as a form or as JSON', async () => {
    const form = await store({
      domain: 'form.example.org',
      privacy: '2',
      password: 's3cret',
      email: 'true',
      exclude_bots: '0',
      exclude_params: 'ref\nutm_source',
      exclude_ips: '192.0.2.1',
    });
    expect(form.status).toBe(201);
    expect(form.body.data).toMatchObject({
      domain: 'form.example.org',
      privacy: 2,
      password: true,
      email: 1,
      exclude_bots: 0,
      exclude_params: 'ref\nutm_source',
      exclude_ips: '192.0.2.1',
    });
    const json = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites', {
      method: 'POST',
      json: { domain: 'json.example.org', privacy: 1, email: true, exclude_bots: false, favorite: 1 },
    });
    expect(json.status).toBe(201);
    // favorite is not a store field: a new website is never a favorite.
    expect(json.body.data).toMatchObject({ domain: 'json.example.org', privacy: 1, email: 1, exclude_bots: 0, favorite: 0 });
    expect((await store({ domain: '203.0.113.9' })).body.data.domain).toBe('203.0.113.9');
  });

  it('accepts a password of 128 characters and rejects 129', async () => {
    expect((await store({ domain: 'a.example.com', privacy: '2', password: 'p'.repeat(128) })).status).toBe(201);
    const reply = await store({ domain: 'b.example.com', privacy: '2', password: 'p'.repeat(129) });
    expect(reply.body).toEqual(invalid({ password: ['The password field must not be greater than 128 characters.'] }));
  });

  it.each([
    [{}, { domain: ['The domain field is required.'] }],
    [{ domain: '   ' }, { domain: ['The domain field is required.'] }],
    [{ domain: 'not a domain' }, { domain: ['The domain field must be a valid domain.'] }],
    [{ domain: 'localhost' }, { domain: ['The domain field must be a valid domain.'] }],
    [{ domain: '999.1.1.1' }, { domain: ['The domain field must be a valid domain.'] }],
    [{ domain: 'example.com:8080' }, { domain: ['The domain field must be a valid domain.'] }],
    [{ domain: 'acme-analytics.com' }, { domain: ['The domain has already been taken.'] }],
    [{ domain: 'HTTP://WWW.Acme-Analytics.com/' }, { domain: ['The domain has already been taken.'] }],
    [{ domain: 'pixelforge.io' }, { domain: ['The domain has already been taken.'] }], // user 2's: unique per install
    [{ domain: 'ok.example.com', privacy: '3' }, { privacy: ['The selected privacy is invalid.'] }],
    [{ domain: 'ok.example.com', privacy: 'public' }, { privacy: ['The privacy field must be an integer.'] }],
    [{ domain: 'ok.example.com', privacy: '2' }, { password: ['The password field is required when privacy is 2.'] }],
    [{ domain: 'ok.example.com', privacy: '2', password: '' }, { password: ['The password field is required when privacy is 2.'] }],
    [{ domain: 'ok.example.com', email: 'yes' }, { email: ['The email field must be true or false.'] }],
    [{ domain: 'ok.example.com', exclude_bots: '2' }, { exclude_bots: ['The exclude bots field must be true or false.'] }],
    [
      { domain: 'nope', privacy: '9', email: 'x', exclude_bots: 'y' },
      {
        domain: ['The domain field must be a valid domain.'],
        privacy: ['The selected privacy is invalid.'],
        email: ['The email field must be true or false.'],
        exclude_bots: ['The exclude bots field must be true or false.'],
      },
    ],
  ])('rejects %j with 422 and changes nothing', async (form, errors) => {
    const reply = await store(form as Record<string, string>);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual(invalid(errors));
    expect((await list('?per_page=100')).body.meta.total).toBe(7);
    expect((await store({ domain: 'ok.example.com' })).body.data.id).toBe(11); // no id was used up either
  });

  it('rejects JSON values of the wrong type', async () => {
    const reply = await call(sandbox, '/api/v1/websites', {
      method: 'POST',
      json: { domain: 'typed.example.com', privacy: 2, password: 1234, exclude_ips: ['1.2.3.4'] },
    });
    expect(reply.body).toEqual(
      invalid({ password: ['The password field must be a string.'], exclude_ips: ['The exclude ips field must be a string.'] }),
    );
  });
});

describe('PUT and PATCH /api/v1/websites/{id}', () => {
  it('changes only the fields sent, with no defaults, and moves updated_at', async () => {
    const before = (await show(2)).body.data;
    const reply = await update(2, { favorite: '1', email: 'true' });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe(200);
    const after = reply.body.data;
    expect(after).toEqual({ ...before, favorite: 1, email: 1, updated_at: after.updated_at });
    expect(after.updated_at > before.updated_at).toBe(true);
    expect(after.updated_at.slice(0, 10)).toBe(TODAY);
    expect((await show(2)).body.data).toEqual(after);
  });

  it('works the same with PUT', async () => {
    const reply = await update(7, { exclude_bots: '0', exclude_ips: '10.1.1.1\n10.1.1.2' }, 'PUT');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id: 7, exclude_bots: 0, exclude_ips: '10.1.1.1\n10.1.1.2', privacy: 0 });
  });

  it('never changes the domain', async () => {
    const reply = await update(2, { domain: 'changed.example.com', email: '1' });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ domain: 'blog.acme-analytics.com', email: 1 });
  });

  it('leaves everything, updated_at included, alone when nothing is sent', async () => {
    const before = (await show(5)).body.data;
    const reply = await update(5, {});
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual(before);
  });

  it('clears exclude_params and exclude_ips with an empty value', async () => {
    const reply = await update(1, { exclude_params: '' });
    expect(reply.body.data.exclude_params).toBeNull();
    const ips = await update(5, { exclude_ips: '' });
    expect(ips.body.data.exclude_ips).toBeNull();
    expect(ips.body.data.email).toBe(1);
  });

  it('needs a password for privacy 2 unless one is already stored', async () => {
    const rejected = await update(2, { privacy: '2', email: '1' });
    expect(rejected.status).toBe(422);
    expect(rejected.body).toEqual(invalid({ password: ['The password field is required when privacy is 2.'] }));
    expect((await show(2)).body.data).toMatchObject({ privacy: 0, email: 0, password: false }); // nothing half-applied

    const withPassword = await update(2, { privacy: '2', password: 'hunter2' });
    expect(withPassword.body.data).toMatchObject({ privacy: 2, password: true });
    expect(withPassword.text).not.toContain('hunter2');
    expect((await update(2, { privacy: '0' })).body.data).toMatchObject({ privacy: 0, password: true });
    expect((await update(2, { privacy: '2' })).body.data).toMatchObject({ privacy: 2, password: true });
    expect((await update(4, { privacy: '2', favorite: '1' })).body.data).toMatchObject({ privacy: 2, favorite: 1 });
  });

  it('rejects bad values with a field map and applies none of the request', async () => {
    const before = (await show(8)).body.data;
    const reply = await update(8, {
      email: '1',
      favorite: 'maybe',
      privacy: '5',
      password: 'x'.repeat(129),
      exclude_bots: 'on',
    });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual(
      invalid({
        privacy: ['The selected privacy is invalid.'],
        password: ['The password field must not be greater than 128 characters.'],
        exclude_bots: ['The exclude bots field must be true or false.'],
        favorite: ['The favorite field must be true or false.'],
      }),
    );
    expect((await show(8)).body.data).toEqual(before);
  });

  it('accepts JSON bodies', async () => {
    const reply = await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/10', {
      method: 'PATCH',
      json: { favorite: true, privacy: 0, exclude_params: 'session' },
    });
    expect(reply.body.data).toMatchObject({ favorite: 1, privacy: 0, exclude_params: 'session' });
  });

  it('answers 404 for unknown, non-numeric and other users’ ids', async () => {
    for (const id of [999, 'abc', 3]) {
      const reply = await call(sandbox, `/api/v1/websites/${id}`, { method: 'PATCH', form: { favorite: '1' } });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual(NOT_FOUND);
    }
    expect((await show(3)).status).toBe(404);
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/3', { key: KEY_2 })).body.data.favorite).toBe(1);
  });
});

describe('DELETE /api/v1/websites/{id}', () => {
  it('deletes the website, its stats and frees its domain', async () => {
    const reply = await call(sandbox, '/api/v1/websites/2', { method: 'DELETE' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ id: 2, object: 'website', deleted: true, status: 200 });
    expect((await show(2)).status).toBe(404);
    expect((await call(sandbox, '/api/v1/websites/2', { method: 'DELETE' })).body).toEqual(NOT_FOUND);
    expect((await call(sandbox, '/api/v1/stats/2?name=visitor&from=2026-03-01&to=2026-03-15')).status).toBe(404);
    expect(ids((await list()).body)).toEqual([10, 8, 7, 5, 4, 1]);
    const again = await store({ domain: 'blog.acme-analytics.com' });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(11);
  });

  it('answers 404 for unknown, non-numeric and other users’ ids, and deletes nothing', async () => {
    for (const id of [999, 'abc', 6]) {
      const reply = await call(sandbox, `/api/v1/websites/${id}`, { method: 'DELETE' });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual(NOT_FOUND);
    }
    expect((await call(sandbox, '/api/v1/websites/6', { key: KEY_2 })).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers 404 for unknown routes and 405 with Allow for wrong methods', async () => {
    for (const path of ['/api/v1/nope', '/api/v1/websites/1/extra', '/api/v1', '/api/v2/websites']) {
      const reply = await call(sandbox, path);
      expect(reply.status, path).toBe(404);
      expect(reply.body, path).toEqual(NOT_FOUND);
    }
    const wrong = await call<ErrorBody>(sandbox, '/api/v1/websites/1', { method: 'POST' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE');
    expect(wrong.body.message).toBe(
      'The POST method is not supported for route api/v1/websites/1. Supported methods: GET, HEAD, PUT, PATCH, DELETE.',
    );
    expect((await call(sandbox, '/api/v1/websites', { method: 'DELETE' })).status).toBe(405);
    expect((await call(sandbox, '/api/v1/stats/1', { method: 'POST' })).headers.get('allow')).toBe('GET, HEAD');
  });

  it('ignores a trailing slash', async () => {
    expect((await call(sandbox, '/api/v1/websites/')).status).toBe(200);
    expect((await call<{ data: WireWebsite }>(sandbox, '/api/v1/websites/1/')).body.data.id).toBe(1);
  });
});
