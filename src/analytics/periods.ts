// Periods a dashboard asks for ("last 30 days") as date ranges, resolved at request time in the upstream's
// time zone. Every "last N days" period ends today, included.
import { addDays, dayIn, monthEnd, monthStart } from './calendar.js';

export const PERIODS = [
  'TODAY',
  'YESTERDAY',
  'LAST_7_DAYS',
  'LAST_30_DAYS',
  'LAST_90_DAYS',
  'LAST_365_DAYS',
  'THIS_MONTH',
  'LAST_MONTH',
  'THIS_YEAR',
  'LAST_YEAR',
] as const;
export type Period = (typeof PERIODS)[number];

export interface DateRange {
  from: string;
  to: string;
}

const lastDays = (today: string, days: number): DateRange => ({ from: addDays(today, 1 - days), to: today });

export function resolvePeriod(period: Period, timeZone: string, epochMs: number): DateRange {
  const today = dayIn(timeZone, epochMs);
  switch (period) {
    case 'TODAY':
      return { from: today, to: today };
    case 'YESTERDAY': {
      const yesterday = addDays(today, -1);
      return { from: yesterday, to: yesterday };
    }
    case 'LAST_7_DAYS':
      return lastDays(today, 7);
    case 'LAST_30_DAYS':
      return lastDays(today, 30);
    case 'LAST_90_DAYS':
      return lastDays(today, 90);
    case 'LAST_365_DAYS':
      return lastDays(today, 365);
    case 'THIS_MONTH':
      return { from: monthStart(today), to: today };
    case 'LAST_MONTH': {
      const end = addDays(monthStart(today), -1);
      return { from: monthStart(end), to: monthEnd(end) };
    }
    case 'THIS_YEAR':
      return { from: `${today.slice(0, 4)}-01-01`, to: today };
    case 'LAST_YEAR': {
      const year = String(Number(today.slice(0, 4)) - 1).padStart(4, '0');
      return { from: `${year}-01-01`, to: `${year}-12-31` };
    }
  }
}
