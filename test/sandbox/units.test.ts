// The pure pieces, tested directly: calendar dates, domain rules, the paginator, the rate
// limiter's window and the stats range sums.
import { describe, expect, it } from 'vitest';
import { formatYmd, laravelTimestamp, parseYmd } from '../../src/sandbox/calendar.js';
import { paginate } from '../../src/sandbox/pagination.js';
import { RateLimiter } from '../../src/sandbox/rate-limiter.js';
import { LabelSeriesBuilder } from '../../src/sandbox/stat-series.js';
import { isValidDomain, normaliseDomain, readPage } from '../../src/sandbox/validation.js';

describe('calendar', () => {
  it('accepts real Y-m-d dates only', () => {
    expect(parseYmd('2024-02-29')).not.toBeNull();
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-3-1', '20260301', '2026-03-01T00:00', ' 2026-03-01']) {
      expect(parseYmd(bad), bad).toBeNull();
    }
    const day = parseYmd('2026-03-15') as number;
    expect(formatYmd(day)).toBe('2026-03-15');
    expect(formatYmd(day - 119)).toBe('2025-11-16');
  });

  it('formats timestamps with microseconds like Laravel', () => {
    expect(laravelTimestamp(Date.UTC(2024, 4, 1, 10, 0, 0, 123))).toBe('2024-05-01T10:00:00.123000Z');
  });
});

describe('domains', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['https://www.example.com/', 'example.com'],
    ['http://shop.example.co.uk/path?q=1#top', 'shop.example.co.uk'],
    ['  www.Blog.Example.org  ', 'blog.example.org'],
    ['www2.example.com', 'www2.example.com'],
  ])('normalises %s to %s', (raw, expected) => {
    expect(normaliseDomain(raw)).toBe(expected);
  });

  it('accepts domain names and IPv4, nothing else', () => {
    for (const good of ['example.com', 'a.b.c.example.io', 'xn--bcher-kva.example', 'my-site.dev', '192.0.2.1', '255.255.255.255']) {
      expect(isValidDomain(good), good).toBe(true);
    }
    for (const bad of ['localhost', 'example', '-bad.com', 'bad-.com', 'exa mple.com', '256.1.1.1', '1.2.3', 'example.com:80', 'example..com', 'ex_ample.com', '']) {
      expect(isValidDomain(bad), bad).toBe(false);
    }
  });
});

describe('paginate', () => {
  const items = Array.from({ length: 23 }, (_, i) => i + 1);
  it('slices and describes a middle page', () => {
    const page = paginate(items, 2, 10, 'http://h/api/v1/websites');
    expect(page.data).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(page.meta).toEqual({ current_page: 2, from: 11, last_page: 3, path: 'http://h/api/v1/websites', per_page: 10, to: 20, total: 23 });
    expect(page.links).toEqual({
      first: 'http://h/api/v1/websites?page=1',
      last: 'http://h/api/v1/websites?page=3',
      prev: 'http://h/api/v1/websites?page=1',
      next: 'http://h/api/v1/websites?page=3',
    });
  });

  it('keeps last_page at 1 for an empty list', () => {
    expect(paginate([], 1, 10, 'p').meta).toEqual({ current_page: 1, from: null, last_page: 1, path: 'p', per_page: 10, to: null, total: 0 });
  });

  it('reads page leniently, like Laravel', () => {
    expect(readPage({ page: '3' })).toBe(3);
    for (const bad of ['0', '-2', 'x', '1.5', '']) expect(readPage({ page: bad }), bad).toBe(1);
    expect(readPage({})).toBe(1);
  });
});

describe('RateLimiter', () => {
  it('allows limit attempts per window per key, without counting refusals', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(2, 10_000, () => now);
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 0 });
    now += 2_500;
    expect(limiter.attempt('a')).toMatchObject({ allowed: false, remaining: 0, retryAfter: 8, resetAt: 1_010 });
    expect(limiter.attempt('b')).toMatchObject({ allowed: true, remaining: 1 });
    now += 7_500;
    expect(limiter.attempt('a')).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('StatSeries', () => {
  it('sums any range from prefix sums, clipped to the window', () => {
    const builder = new LabelSeriesBuilder(100, 5);
    builder.column('a').splice(0, 5, 1, 2, 3, 4, 5);
    builder.column('b').splice(0, 5, 0, 0, 10, 0, 0);
    const series = builder.build();
    const rows = (fromDay: number, toDay: number) => series.rows({ fromDay, toDay, sortBy: 'count', sort: 'desc' });
    expect(rows(100, 104)).toEqual([{ value: 'a', count: 15 }, { value: 'b', count: 10 }]);
    expect(rows(101, 102)).toEqual([{ value: 'b', count: 10 }, { value: 'a', count: 5 }]);
    expect(rows(103, 200)).toEqual([{ value: 'a', count: 9 }]); // b has nothing there
    expect(rows(0, 99)).toEqual([]);
    expect(series.rows({ fromDay: 0, toDay: 999, sortBy: 'value', sort: 'desc', search: 'B' })).toEqual([{ value: 'b', count: 10 }]);
  });
});
