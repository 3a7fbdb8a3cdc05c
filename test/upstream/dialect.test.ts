// Stat names per install (src/upstream/dialect.ts), without HTTP: which names are tried, in which
// order, what is remembered and what is not.
import { describe, expect, it, vi } from 'vitest';
import { STAT_NAMES } from '../../src/domain.js';
import { GatewayError, isGatewayError } from '../../src/errors.js';
import { createStatNames, wireNameCandidates } from '../../src/upstream/dialect.js';

const nameRefused = (): GatewayError =>
  new GatewayError('BAD_USER_INPUT', 'The selected name is invalid.', { fieldErrors: { name: ['The selected name is invalid.'] } });

/**
 * A fake install that knows these wire names and records what it was asked. `upgrade` changes the
 * names it knows from then on; `hold` keeps the answers of the reads that arrive from then on until
 * `release`, and they are answered with the names known at that time.
 */
function install(names: string[]) {
  const asked: string[] = [];
  let known = names;
  let held: Promise<void> | undefined;
  let release = (): void => undefined;
  const read = async (wireName: string): Promise<string> => {
    asked.push(wireName);
    if (held !== undefined) await held;
    if (!known.includes(wireName)) throw nameRefused();
    return `rows of ${wireName}`;
  };
  return {
    asked,
    read,
    upgrade: (to: string[]) => void (known = to),
    hold: () => void (held = new Promise<void>((resolve) => (release = resolve))),
    release: () => {
      held = undefined;
      release();
    },
  };
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

  it("pinned to legacy: the older name first time, without trying the contract's", async () => {
    const names = createStatNames('legacy');
    const legacy = install(['resolution']);
    expect(await names.read('screen_resolution', legacy.read)).toBe('rows of resolution');
    expect(legacy.asked).toEqual(['resolution']);
  });

  it('a remembered name the install refuses later is learned again: the other name, once, then remembered', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['visitor']);
    expect(await names.read('visitor', upgraded.read)).toBe('rows of visitor');
    upgraded.upgrade(['visitors']); // rolled back to the older install
    expect(await names.read('visitor', upgraded.read)).toBe('rows of visitors');
    expect(await names.read('visitor', upgraded.read)).toBe('rows of visitors');
    upgraded.upgrade(['visitor']); // and upgraded again
    expect(await names.read('visitor', upgraded.read)).toBe('rows of visitor');
    // Each switch costs one refused name and one try of the other.
    expect(upgraded.asked).toEqual(['visitor', 'visitor', 'visitors', 'visitors', 'visitors', 'visitor']);
  });

  it('reads on their way across a switch: each refused once, one learns, the others read with what it learnt', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['os']);
    await names.read('operating_system', upgraded.read);
    upgraded.asked.length = 0;
    upgraded.hold();
    const reads = Array.from({ length: 4 }, () => names.read('operating_system', upgraded.read));
    upgraded.upgrade(['operating_system']);
    upgraded.release(); // the four refusals come back; the learner's read of the other name is held
    upgraded.hold();
    await vi.waitFor(() => expect(upgraded.asked).toHaveLength(5));
    await new Promise((resolve) => setImmediate(resolve));
    expect(upgraded.asked).toHaveLength(5); // the other three wait for what it learns
    upgraded.release();
    expect(await Promise.all(reads)).toEqual(Array(4).fill('rows of operating_system'));
    // The four already sent with the old name, then one learning and three after it: no name is
    // refused twice and the old name is not asked again.
    expect(upgraded.asked).toEqual([...Array(4).fill('os'), ...Array(4).fill('operating_system')]);
  });

  it('reads that come while the name is learned again wait for it and send no refused name', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['pageview']);
    await names.read('pageview', upgraded.read);
    upgraded.upgrade(['pageviews']);
    upgraded.hold();
    const first = names.read('pageview', upgraded.read);
    upgraded.release(); // the refusal of the first read comes back, and it starts learning (held again)
    upgraded.hold();
    await vi.waitFor(() => expect(upgraded.asked).toEqual(['pageview', 'pageview', 'pageviews']));
    const later = Array.from({ length: 3 }, () => names.read('pageview', upgraded.read));
    upgraded.release();
    expect(await Promise.all([first, ...later])).toEqual(Array(4).fill('rows of pageviews'));
    expect(upgraded.asked).toEqual(['pageview', 'pageview', 'pageviews', 'pageviews', 'pageviews', 'pageviews']);
  });

  it('reads on their way across a switch to an install with neither name: one tries the other, all UNSUPPORTED', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['visitor']);
    await names.read('visitor', upgraded.read);
    upgraded.asked.length = 0;
    upgraded.hold();
    const reads = Array.from({ length: 3 }, () => names.read('visitor', upgraded.read).catch((e: unknown) => e));
    upgraded.upgrade(['country']);
    upgraded.release();
    for (const error of await Promise.all(reads)) expect(isGatewayError(error, 'UNSUPPORTED')).toBe(true);
    expect(upgraded.asked).toEqual(['visitor', 'visitor', 'visitor', 'visitors']);
  });

  it('a statistic the upgraded install no longer has: UNSUPPORTED, remembered without asking again', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['landing_page']);
    await names.read('landing_page', upgraded.read);
    upgraded.upgrade(['country']);
    for (let i = 0; i < 2; i++) {
      const error: unknown = await names.read('landing_page', upgraded.read).catch((e: unknown) => e);
      expect(isGatewayError(error, 'UNSUPPORTED')).toBe(true);
    }
    expect(upgraded.asked).toEqual(['landing_page', 'landing_page']);
  });

  it('an outage while learning again teaches nothing: the next read learns again', async () => {
    const names = createStatNames('auto');
    const upgraded = install(['resolution']);
    await names.read('screen_resolution', upgraded.read);
    upgraded.asked.length = 0;
    upgraded.upgrade(['screen_resolution']);
    const outage = new GatewayError('UPSTREAM_ERROR', 'down');
    let calls = 0;
    const flaky = (wireName: string): Promise<string> => (++calls === 2 ? Promise.reject(outage) : upgraded.read(wireName));
    await expect(names.read('screen_resolution', flaky)).rejects.toBe(outage);
    expect(await names.read('screen_resolution', upgraded.read)).toBe('rows of screen_resolution');
    // The refused name, then (the outage) nothing recorded; then the refused name again and the other.
    expect(upgraded.asked).toEqual(['resolution', 'resolution', 'screen_resolution']);
  });
});
