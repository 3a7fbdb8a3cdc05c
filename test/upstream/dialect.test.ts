// Stat names per install (src/upstream/dialect.ts), without HTTP: which names are tried, in which
// order, what is remembered and what is not.
import { describe, expect, it } from 'vitest';
import { STAT_NAMES } from '../../src/domain.js';
import { GatewayError, isGatewayError } from '../../src/errors.js';
import { createStatNames, wireNameCandidates } from '../../src/upstream/dialect.js';

const nameRefused = (): GatewayError =>
  new GatewayError('BAD_USER_INPUT', 'The selected name is invalid.', { fieldErrors: { name: ['The selected name is invalid.'] } });

/** A fake install that knows these wire names and records what it was asked. */
function install(names: string[]) {
  const asked: string[] = [];
  const read = async (wireName: string): Promise<string> => {
    asked.push(wireName);
    if (!names.includes(wireName)) throw nameRefused();
    return `rows of ${wireName}`;
  };
  return { asked, read };
}

describe('wireNameCandidates', () => {
  it('auto: the contract name first, then the older one; one name where both agree', () => {
    expect(wireNameCandidates('operating_system', 'auto')).toEqual(['operating_system', 'os']);
    expect(wireNameCandidates('visitor', 'auto')).toEqual(['visitor', 'visitors']);
    expect(wireNameCandidates('country', 'auto')).toEqual(['country']);
    expect(wireNameCandidates('visitor_hour', 'auto')).toEqual(['visitors_hours']);
  });

  it('pinned: that family only, nothing for a statistic it lacks', () => {
    expect(wireNameCandidates('pageview', 'legacy')).toEqual(['pageviews']);
    expect(wireNameCandidates('screen_resolution', 'contract')).toEqual(['screen_resolution']);
    expect(wireNameCandidates('landing_page', 'contract')).toEqual([]);
  });

  it('every statistic has at least one name in auto', () => {
    for (const name of STAT_NAMES) expect(wireNameCandidates(name, 'auto').length, name).toBeGreaterThan(0);
  });
});

describe('createStatNames', () => {
  it('learns the name that works and sends it straight away afterwards', async () => {
    const names = createStatNames('auto');
    const legacy = install(['os']);
    expect(await names.read('operating_system', legacy.read)).toBe('rows of os');
    expect(await names.read('operating_system', legacy.read)).toBe('rows of os');
    expect(legacy.asked).toEqual(['operating_system', 'os', 'os']);
  });

  it('no accepted name: UNSUPPORTED naming the statistic, remembered without asking again', async () => {
    const names = createStatNames('auto');
    const contract = install(['country']);
    for (let i = 0; i < 2; i++) {
      const error: unknown = await names.read('landing_page', contract.read).catch((e: unknown) => e);
      expect(isGatewayError(error, 'UNSUPPORTED')).toBe(true);
      expect((error as Error).message).toContain('LANDING_PAGE');
    }
    expect(contract.asked).toEqual(['landing_page']);
  });

  it('a failure that is not about the name is passed on and teaches nothing', async () => {
    const names = createStatNames('auto');
    const outage = new GatewayError('UPSTREAM_ERROR', 'down');
    await expect(names.read('visitor', () => Promise.reject(outage))).rejects.toBe(outage);
    const legacy = install(['visitors']);
    expect(await names.read('visitor', legacy.read)).toBe('rows of visitors');
    expect(legacy.asked).toEqual(['visitor', 'visitors']);
  });

  it('a 422 on another field is not a refused name', async () => {
    const names = createStatNames('auto');
    const refused = new GatewayError('BAD_USER_INPUT', 'bad to', { fieldErrors: { to: ['The to must be a date after from.'] } });
    await expect(names.read('visitor', () => Promise.reject(refused))).rejects.toBe(refused);
  });

  it('concurrent first reads wait for the one learning the name', async () => {
    const names = createStatNames('auto');
    const legacy = install(['pageviews']);
    const rows = await Promise.all(Array.from({ length: 4 }, () => names.read('pageview', legacy.read)));
    expect(rows).toEqual(Array(4).fill('rows of pageviews'));
    expect(legacy.asked).toEqual(['pageview', 'pageviews', 'pageviews', 'pageviews', 'pageviews']);
  });

  it('pinned to legacy: the older name first time, without trying the contract\'s', async () => {
    const names = createStatNames('legacy');
    const legacy = install(['resolution']);
    expect(await names.read('screen_resolution', legacy.read)).toBe('rows of resolution');
    expect(legacy.asked).toEqual(['resolution']);
  });
});
