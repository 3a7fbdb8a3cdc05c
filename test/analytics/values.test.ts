import { describe, expect, it } from 'vitest';
import { readValue } from '../../src/analytics/values.js';

describe('readValue', () => {
  it.each([
    ['country', 'US:United States', { label: 'United States', code: 'US', date: null, event: null }],
    ['continent', 'EU:Europe', { label: 'Europe', code: 'EU', date: null, event: null }],
    ['city', 'US:New York, NY', { label: 'New York, NY', code: 'US', date: null, event: null }],
    ['language', 'en', { label: 'English', code: 'en', date: null, event: null }],
    ['language', 'de', { label: 'German', code: 'de', date: null, event: null }],
    ['referrer', '', { label: 'Direct', code: null, date: null, event: null }],
    ['referrer', 'news.ycombinator.com', { label: 'news.ycombinator.com', code: null, date: null, event: null }],
    ['event', 'purchase:89:EUR', { label: 'purchase', code: null, date: null, event: { name: 'purchase', value: '89', unit: 'EUR' } }],
    ['event', 'signup::', { label: 'signup', code: null, date: null, event: { name: 'signup', value: null, unit: null } }],
    ['visitor', '2026-03-01', { label: '2026-03-01', code: null, date: '2026-03-01', event: null }],
    ['pageview', '2026-03-02', { label: '2026-03-02', code: null, date: '2026-03-02', event: null }],
    ['page', '/pricing?plan=pro', { label: '/pricing?plan=pro', code: null, date: null, event: null }],
    ['screen_resolution', '1920x1080', { label: '1920x1080', code: null, date: null, event: null }],
  ] as const)('%s %j', (name, value, expected) => {
    expect(readValue(name, value)).toEqual(expected);
  });

  it.each([
    ['country', 'United States'],
    ['city', ':Nowhere'],
    ['language', 'english'],
    ['language', 'zz'],
    ['event', 'no-colons'],
    ['event', ':value:unit'],
    ['event', 'a:b:c:d'],
    ['visitor', 'yesterday'],
  ] as const)('malformed %s %j keeps its text, parts null', (name, value) => {
    expect(readValue(name, value)).toEqual({ label: value, code: null, date: null, event: null });
  });
});
