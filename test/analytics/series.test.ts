import { describe, expect, it } from 'vitest';
import { bucket, changeBasis, comparedRange, relativeChange, total, zeroFill } from '../../src/analytics/series.js';

describe('zeroFill', () => {
  it('gives every day of the range, zero where the install had no row, and ignores rows outside', () => {
    const rows = [
      { value: '2026-03-02', count: 5 },
      { value: '2026-02-28', count: 99 },
      { value: '2026-03-04', count: 1 },
    ];
    expect(zeroFill(rows, { from: '2026-03-01', to: '2026-03-04' })).toEqual([
      { date: '2026-03-01', count: 0 },
      { date: '2026-03-02', count: 5 },
      { date: '2026-03-03', count: 0 },
      { date: '2026-03-04', count: 1 },
    ]);
    expect(zeroFill([], { from: '2026-03-01', to: '2026-03-01' })).toEqual([{ date: '2026-03-01', count: 0 }]);
  });
});

describe('bucket', () => {
  const daily = (from: string, to: string) => zeroFill([], { from, to }).map((point, i) => ({ ...point, count: i + 1 }));

  it('ISO weeks across a year boundary, the first one dated by its first day in the range', () => {
    const range = { from: '2026-12-30', to: '2027-01-12' }; // Wednesday to Tuesday
    const points = bucket(daily(range.from, range.to), 'WEEK', range);
    expect(points).toEqual([
      { date: '2026-12-30', count: 1 + 2 + 3 + 4 + 5 }, // Wed 30 Dec .. Sun 3 Jan
      { date: '2027-01-04', count: 6 + 7 + 8 + 9 + 10 + 11 + 12 },
      { date: '2027-01-11', count: 13 + 14 },
    ]);
  });

  it('months with a partial first and last bucket', () => {
    const range = { from: '2026-01-30', to: '2026-03-02' };
    const points = bucket(daily(range.from, range.to), 'MONTH', range);
    expect(points.map((p) => p.date)).toEqual(['2026-01-30', '2026-02-01', '2026-03-01']);
    expect(points[0]?.count).toBe(1 + 2);
    expect(total(points)).toBe(total(daily(range.from, range.to)));
  });

  it('DAY keeps the days', () => {
    const range = { from: '2026-03-01', to: '2026-03-03' };
    expect(bucket(daily(range.from, range.to), 'DAY', range)).toEqual(daily(range.from, range.to));
  });
});

describe('comparisons', () => {
  it('the previous period has the same length, just before', () => {
    expect(comparedRange({ from: '2026-03-01', to: '2026-03-31' }, 'PREVIOUS_PERIOD')).toEqual({ from: '2026-01-29', to: '2026-02-28' });
    expect(comparedRange({ from: '2026-03-15', to: '2026-03-15' }, 'PREVIOUS_PERIOD')).toEqual({ from: '2026-03-14', to: '2026-03-14' });
  });

  it('the previous year has the same dates a year earlier', () => {
    expect(comparedRange({ from: '2028-02-01', to: '2028-02-29' }, 'PREVIOUS_YEAR')).toEqual({ from: '2027-02-01', to: '2027-02-28' });
  });

  it('relative change, null against zero', () => {
    expect(relativeChange(150, 100)).toBe(0.5);
    expect(relativeChange(50, 100)).toBe(-0.5);
    expect(relativeChange(10, 0)).toBeNull();
    expect(relativeChange(0, 0)).toBeNull();
  });
});

describe('changeBasis', () => {
  const previous = { from: '2026-02-14', to: '2026-02-28' };
  it('compares a range that is over whole', () => {
    const current = { from: '2026-03-01', to: '2026-03-15' };
    expect(changeBasis(current, previous, '2026-03-16')).toEqual({ current, previous });
  });
  it('compares a range that reaches today by its days that are over, against as many from the compared start', () => {
    expect(changeBasis({ from: '2026-03-01', to: '2026-03-15' }, previous, '2026-03-10')).toEqual({
      current: { from: '2026-03-01', to: '2026-03-09' },
      previous: { from: '2026-02-14', to: '2026-02-22' },
    });
  });
  it('has nothing to compare when no day of the range is over', () => {
    expect(changeBasis({ from: '2026-03-15', to: '2026-03-15' }, { from: '2026-03-14', to: '2026-03-14' }, '2026-03-15')).toBeNull();
  });
});
