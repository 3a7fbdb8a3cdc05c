import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, eachDay, isoWeekStart, monthEnd, yearEarlier } from '../../src/analytics/calendar.js';
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

  it('in the install\'s time zone, east and west of UTC', () => {
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
