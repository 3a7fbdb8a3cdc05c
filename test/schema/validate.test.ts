import { describe, expect, it } from 'vitest';
import { statsQuery } from '../../src/schema/stat.js';
import { websiteListQuery } from '../../src/schema/website.js';
import { rangeProblems, resolveRange } from '../../src/schema/ranges.js';
import { listArgumentsProblems, normalizeDomain, parseCalendarDate, shown, websiteWriteProblems } from '../../src/schema/validate.js';
import { toWebsiteForm } from '../../src/upstream/api.js';
import { statsQueryKey, websiteListKey } from '../../src/cache/keys.js';

/** Ranges here are given as from/to; the clock would only resolve periods. */
const CLOCK = { now: () => Date.parse('2026-03-15T12:00:00Z'), timeZone: 'UTC' };

describe('parseCalendarDate', () => {
  it.each(['2026-02-28', '2024-02-29', '1970-01-01', '2026-12-31'])('accepts %s', (date) => {
    expect(parseCalendarDate(date)).toBe(date);
  });
  it.each(['2026-02-30', '2025-02-29', '2026-13-01', '2026-00-10', '2026-1-01', '20260101', '2026-01-01T00:00', ''])('rejects %j', (date) =>
    expect(parseCalendarDate(date)).toBeNull(),
  );
});

describe('normalizeDomain', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['https://www.example.com/path?q=1', 'example.com'],
    ['http://sub.example.co.uk', 'sub.example.co.uk'],
    ['  my-site.io  ', 'my-site.io'],
    ['192.168.0.1', '192.168.0.1'],
  ])('%j -> %j', (input, output) => expect(normalizeDomain(input)).toBe(output));
  it.each([
    '',
    'localhost',
    'not a domain',
    '-bad.com',
    'bad-.com',
    'a..com',
    '999.1.1.1x',
    'exa_mple.com',
    `${'a'.repeat(64)}.com`,
    'example.123',
  ])('rejects %j', (input) => expect(normalizeDomain(input)).toBeNull());
});

describe('arguments', () => {
  const base = { name: 'page' as const, from: '2026-03-01', to: '2026-03-15' };
  it('applies defaults, also for explicit nulls', () => {
    expect(statsQuery('7', { ...base, sortBy: null, sort: null, perPage: null, page: null, search: null }, CLOCK)).toEqual({
      websiteId: '7',
      ...base,
      sortBy: 'count',
      sort: 'desc',
      perPage: 10,
      page: 1,
    });
    expect(websiteListQuery({})).toEqual({ sortBy: 'id', sort: 'desc', perPage: 10, page: 1 });
  });
  it.each([
    [{ perPage: 20 }, 'perPage', 'perPage must be one of 10, 25, 50, 100, got 20.'],
    [{ page: 0 }, 'page', 'page must be an integer from 1 to 1000000, got 0.'],
    [{ search: 'x'.repeat(256) }, 'search', 'search must be at most 255 characters, got 256.'],
    [{ from: '2026-03-16' }, 'to', 'to (2026-03-15) must be on or after from (2026-03-16).'],
  ])('refuses %j naming %s', (override, argument, message) => {
    expect(() => statsQuery('7', { ...base, ...override }, CLOCK)).toThrow(message);
    try {
      statsQuery('7', { ...base, ...override }, CLOCK);
    } catch (error) {
      expect((error as { extensions: unknown }).extensions).toEqual({ code: 'BAD_USER_INPUT', argument });
    }
  });
  it.each(['0', '-1', 'abc', '1.5', '01', '12345678901234567'])('refuses website id %j', (id) => {
    expect(() => statsQuery(id, base, CLOCK)).toThrow(/websiteId must be a positive integer id/);
  });
  it('builds one cache key for the same parameters in any order', () => {
    const query = statsQuery('7', base, CLOCK);
    const reordered = Object.fromEntries(Object.entries(query).reverse()) as typeof query;
    expect(statsQueryKey(reordered)).toBe(statsQueryKey(query));
    expect(statsQueryKey({ ...query, search: undefined })).toBe(statsQueryKey(query));
    expect(statsQueryKey({ ...query, page: 2 })).not.toBe(statsQueryKey(query));
    expect(statsQueryKey({ ...query, search: 'x' })).not.toBe(statsQueryKey(query));
    expect(statsQueryKey({ ...query, websiteId: '7","x' })).not.toBe(statsQueryKey({ ...query, websiteId: '7', name: 'x' as never }));
    const list = { sortBy: 'id', sort: 'desc', perPage: 10, page: 1 } as const;
    expect(websiteListKey({ page: 1, perPage: 10, sort: 'desc', sortBy: 'id' })).toBe(websiteListKey(list));
    expect(websiteListKey({ ...list, favorite: undefined })).toBe(websiteListKey(list));
    expect(websiteListKey({ ...list, favorite: false })).not.toBe(websiteListKey(list));
    expect(websiteListKey({ ...list, search: '' })).not.toBe(websiteListKey(list));
  });
});

describe('website writes', () => {
  it('encodes a full write as the upstream form', () => {
    expect(
      toWebsiteForm({
        domain: 'a.com',
        privacy: 'PRIVATE',
        password: 'p',
        emailReports: false,
        excludeBots: true,
        excludeParams: [],
        excludeIps: ['1.1.1.1', '2.2.2.2'],
        favorite: false,
      }),
    ).toEqual({
      domain: 'a.com',
      privacy: '1',
      password: 'p',
      email: '0',
      exclude_bots: '1',
      exclude_params: '',
      exclude_ips: '1.1.1.1\n2.2.2.2',
      favorite: '0',
    });
    expect(toWebsiteForm({})).toEqual({});
  });
  it('checks create-only rules only on create: privacy PASSWORD without a password is left to the install on update', () => {
    // The install keeps a stored password (its rule is `sometimes` on update) and refuses PASSWORD without one.
    expect(websiteWriteProblems({ privacy: 'PASSWORD' }, false)).toEqual([]);
    expect(websiteWriteProblems({ privacy: 'PASSWORD', password: 'x' }, false)).toEqual([]);
    expect(websiteWriteProblems({ privacy: 'PASSWORD' }, true).map((p) => p.field.join('.'))).toEqual(['input.domain', 'input.password']);
  });
  it('bounds passwords and list entries, naming the value (a password by its length only)', () => {
    expect(websiteWriteProblems({ password: `s3cret${'x'.repeat(123)}` }, false)).toEqual([
      { field: ['input', 'password'], message: 'password must be 1 to 128 characters, got 129.' },
    ]);
    expect(websiteWriteProblems({ password: '' }, false)).toHaveLength(1);
    expect(websiteWriteProblems({ excludeParams: Array.from({ length: 1001 }, () => 'p') }, false)[0]?.message).toBe(
      'excludeParams may hold at most 1000 entries, got 1001.',
    );
    expect(websiteWriteProblems({ excludeParams: ['ok', 'two\nlines'] }, false)).toEqual([
      {
        field: ['input', 'excludeParams', '1'],
        message: 'excludeParams[1] must be a non-empty single line of at most 255 characters, got "two\\nlines".',
      },
    ]);
    expect(websiteWriteProblems({ domain: 'not a domain' }, true)[0]?.message).toContain('Got "not a domain".');
  });
});

describe('range arguments', () => {
  it.each([
    [
      { period: 'LAST_7_DAYS', from: '2026-03-01', to: '2026-03-02' },
      'period',
      'Give either period or from and to, not both: got period LAST_7_DAYS with from 2026-03-01 and to 2026-03-02.',
    ],
    [
      { period: 'LAST_7_DAYS', to: '2026-03-02' },
      'period',
      'Give either period or from and to, not both: got period LAST_7_DAYS with to 2026-03-02.',
    ],
    [{}, 'from', 'Give a period, or from and to: got none of them.'],
    [{ from: '2026-03-01', period: null }, 'to', 'Give both from and to (or a period): got from 2026-03-01 and no to.'],
    [{ to: '2026-03-01' }, 'from', 'Give both from and to (or a period): got to 2026-03-01 and no from.'],
    [{ from: '2026-03-02', to: '2026-03-01' }, 'to', 'to (2026-03-01) must be on or after from (2026-03-02).'],
    [{ from: '2026-02-30', to: '2026-03-01' }, 'from', 'from must be a real calendar date written YYYY-MM-DD, got "2026-02-30".'],
  ] as const)('%j: %s', (args, argument, message) => {
    expect(rangeProblems(args)).toEqual([{ field: [argument], message }]);
    expect(() => resolveRange(args, CLOCK)).toThrow(message);
  });
  it('accepts a period alone, or from and to in order', () => {
    expect(rangeProblems({ period: 'TODAY', from: null, to: null })).toEqual([]);
    expect(resolveRange({ period: 'TODAY' }, CLOCK)).toEqual({ from: '2026-03-15', to: '2026-03-15' });
    expect(resolveRange({ from: '2026-03-01', to: '2026-03-01' }, CLOCK)).toEqual({ from: '2026-03-01', to: '2026-03-01' });
  });
});

describe('list arguments', () => {
  it('checks the defaulted values: an explicit null is the default, an empty search none', () => {
    expect(listArgumentsProblems({ perPage: null, page: null, search: '' })).toEqual([]);
    expect(listArgumentsProblems({ perPage: 7, page: 1_000_001, search: 'x'.repeat(256) }).map((problem) => problem.message)).toEqual([
      'perPage must be one of 10, 25, 50, 100, got 7.',
      'page must be an integer from 1 to 1000000, got 1000001.',
      'search must be at most 255 characters, got 256.',
    ]);
  });
  it('shows a long value cut short', () => {
    expect(shown('x'.repeat(41))).toBe(`"${'x'.repeat(40)}…"`);
    expect(shown('a"b')).toBe('"a\\"b"');
  });
});
