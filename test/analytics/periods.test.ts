import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addDays, dayIn, daysBetween, eachDay, isoWeekStart, isUtcZone, monthEnd, yearEarlier } from '../../src/analytics/calendar.js';
import { resolvePeriod, type Period } from '../../src/analytics/periods.js';

const at = (iso: string): number => Date.parse(iso);

describe('resolvePeriod', () => {
  it.each<[Period, string, string]>([
    ['TODAY', '2026-03-15', '2026-03-15'],
    ['YESTERDAY', '2026-03-14', '2026-03-14'],
    ['LAST_7_DAYS', '2026-03-09', '2026-03-15'],
    ['LAST_30_DAYS', '2026-02-14', '2026-03-15'],
    ['LAST_90_DAYS', '2025-12-16', '2026-03-15'],
    ['LAST_365_DAYS', '2025-03-16', '2026-03-15'],
    ['THIS_MONTH', '2026-03-01', '2026-03-15'],
    ['LAST_MONTH', '2026-02-01', '2026-02-28'],
    ['THIS_YEAR', '2026-01-01', '2026-03-15'],
    ['LAST_YEAR', '2025-01-01', '2025-12-31'],
  ])('%s on 2026-03-15 (UTC) is %s to %s', (period, from, to) => {
    expect(resolvePeriod(period, 'UTC', at('2026-03-15T12:00:00Z'))).toEqual({ from, to });
  });

  it('around a year end: yesterday and last month cross into the previous year', () => {
    const newYear = at('2027-01-01T08:00:00Z');
    expect(resolvePeriod('YESTERDAY', 'UTC', newYear)).toEqual({ from: '2026-12-31', to: '2026-12-31' });
    expect(resolvePeriod('LAST_MONTH', 'UTC', newYear)).toEqual({ from: '2026-12-01', to: '2026-12-31' });
    expect(resolvePeriod('THIS_YEAR', 'UTC', newYear)).toEqual({ from: '2027-01-01', to: '2027-01-01' });
    expect(resolvePeriod('LAST_7_DAYS', 'UTC', newYear)).toEqual({ from: '2026-12-26', to: '2027-01-01' });
  });

  it('leap years: February has 29 days, so the 30 days to 1 March start on 1 February', () => {
    expect(resolvePeriod('LAST_MONTH', 'UTC', at('2028-03-10T00:00:00Z'))).toEqual({ from: '2028-02-01', to: '2028-02-29' });
    expect(resolvePeriod('LAST_30_DAYS', 'UTC', at('2028-03-01T00:00:00Z'))).toEqual({ from: '2028-02-01', to: '2028-03-01' });
    expect(resolvePeriod('LAST_30_DAYS', 'UTC', at('2027-03-01T00:00:00Z'))).toEqual({ from: '2027-01-31', to: '2027-03-01' });
    expect(resolvePeriod('LAST_365_DAYS', 'UTC', at('2028-12-31T00:00:00Z'))).toEqual({ from: '2028-01-02', to: '2028-12-31' });
  });

  it("in the install's time zone, east and west of UTC", () => {
    const instant = at('2026-03-31T23:30:00Z');
    expect(resolvePeriod('TODAY', 'UTC', instant)).toEqual({ from: '2026-03-31', to: '2026-03-31' });
    expect(resolvePeriod('TODAY', 'Asia/Tokyo', instant)).toEqual({ from: '2026-04-01', to: '2026-04-01' });
    expect(resolvePeriod('THIS_MONTH', 'Asia/Tokyo', instant)).toEqual({ from: '2026-04-01', to: '2026-04-01' });
    expect(resolvePeriod('LAST_MONTH', 'Asia/Tokyo', instant)).toEqual({ from: '2026-03-01', to: '2026-03-31' });
    const early = at('2026-01-01T03:00:00Z');
    expect(resolvePeriod('TODAY', 'America/Los_Angeles', early)).toEqual({ from: '2025-12-31', to: '2025-12-31' });
    expect(resolvePeriod('THIS_YEAR', 'America/Los_Angeles', early)).toEqual({ from: '2025-01-01', to: '2025-12-31' });
  });
});

describe('dayIn', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('tells the UTC day of instants asked in any order, the same day again included (the last one is remembered)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), { minLength: 1, maxLength: 20 }),
        (instants) => {
          // Each instant, its neighbours across midnight, and itself again.
          for (const ms of instants.flatMap((ms) => [ms, ms - (ms % 86_400_000) - 1, ms - (ms % 86_400_000), ms])) {
            expect(dayIn('UTC', ms)).toBe(new Date(ms).toISOString().slice(0, 10));
          }
        },
      ),
    );
  });

  const viaIntl = (timeZone: string, epochMs: number): string =>
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(epochMs);
  // Every name of UTC in the time zone database, with and without Etc/, and in other cases.
  const UTC_NAMES = ['UTC', 'UCT', 'GMT', 'GMT0', 'GMT+0', 'GMT-0', 'Greenwich', 'Universal', 'Zulu']
    .flatMap((name) => [name, `Etc/${name}`])
    .concat(['utc', 'etc/zulu', 'ETC/GMT-0']);

  it('names of UTC are told without Intl, and say the same day as Intl does', () => {
    for (const name of UTC_NAMES) expect(isUtcZone(name), name).toBe(true);
    const spy = vi.spyOn(Intl, 'DateTimeFormat');
    // Instants from 1970 to 2100, with the last and first milliseconds of days.
    const instants = fc.oneof(
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      fc.integer({ min: 1, max: 47_000 }).map((day) => day * 86_400_000 - 1),
      fc.integer({ min: 0, max: 47_000 }).map((day) => day * 86_400_000),
    );
    const days: [string, number, string][] = [];
    fc.assert(
      fc.property(fc.constantFrom(...UTC_NAMES), instants, (name, epochMs) => {
        days.push([name, epochMs, dayIn(name, epochMs)]);
      }),
      { numRuns: 500 },
    );
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    for (const [name, epochMs, day] of days) expect(day, `${name} at ${epochMs}`).toBe(viaIntl(name, epochMs));
  });

  it('zones with offsets go through Intl, one formatter per zone', () => {
    for (const name of ['Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata', 'Etc/GMT+5', 'Pacific/Kiritimati'])
      expect(isUtcZone(name), name).toBe(false);
    const Real = Intl.DateTimeFormat;
    const built: (string | undefined)[] = [];
    // biome-ignore lint/complexity/useArrowFunction: a constructor stand-in (called with `new`), which an arrow function cannot be.
    vi.spyOn(Intl, 'DateTimeFormat').mockImplementation(function (locales?: string | string[], options?: Intl.DateTimeFormatOptions) {
      built.push(options?.timeZone);
      return new Real(locales, options);
    } as typeof Intl.DateTimeFormat);
    // 23:30 UTC on 14 March: already the 15th in Adelaide, still the 14th in St. John's (zones no other test here uses).
    const late = Date.parse('2026-03-14T23:30:00Z');
    expect(dayIn('Australia/Adelaide', late)).toBe('2026-03-15');
    expect(dayIn('America/St_Johns', late)).toBe('2026-03-14');
    expect(dayIn('Australia/Adelaide', late + 86_400_000)).toBe('2026-03-16');
    expect(dayIn('America/St_Johns', late + 86_400_000)).toBe('2026-03-15');
    expect(built).toEqual(['Australia/Adelaide', 'America/St_Johns']);
  });
});

describe('calendar', () => {
  it('adds days across months, years and a leap day', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2027-02-28', 1)).toBe('2027-03-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    expect(daysBetween('2026-03-01', '2026-03-01')).toBe(1);
    expect(daysBetween('2028-02-01', '2028-03-01')).toBe(30);
    expect(eachDay('2026-12-30', '2027-01-02')).toEqual(['2026-12-30', '2026-12-31', '2027-01-01', '2027-01-02']);
  });

  it('finds ISO week starts (Monday) and month ends', () => {
    expect(isoWeekStart('2027-01-01')).toBe('2026-12-28'); // a Friday
    expect(isoWeekStart('2026-03-16')).toBe('2026-03-16'); // a Monday
    expect(isoWeekStart('2026-03-15')).toBe('2026-03-09'); // a Sunday
    expect(monthEnd('2028-02-10')).toBe('2028-02-29');
    expect(monthEnd('2026-12-01')).toBe('2026-12-31');
  });

  it('a year earlier, with 29 February as 28 February', () => {
    expect(yearEarlier('2026-03-15')).toBe('2025-03-15');
    expect(yearEarlier('2028-02-29')).toBe('2027-02-28');
    expect(yearEarlier('2029-02-28')).toBe('2028-02-28');
  });
});
