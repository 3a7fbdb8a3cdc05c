// Date ranges: every range argument is either `from` + `to` or a `period` ("last 30 days"), resolved
// at request time in the upstream's time zone; the range used is reported back (`range { from to }`).
import type { Clock } from '../analytics/calendar.js';
import { PERIODS, resolvePeriod, type DateRange, type Period } from '../analytics/periods.js';
import { builder } from './builder.js';
import { assertNoProblems, dateProblem, dateRangeProblem, problemsOf, type Problem } from './validate.js';

const periodDescriptions: Record<Period, string> = {
  TODAY: 'Today.',
  YESTERDAY: 'Yesterday.',
  LAST_7_DAYS: 'The 7 days ending today, today included.',
  LAST_30_DAYS: 'The 30 days ending today, today included.',
  LAST_90_DAYS: 'The 90 days ending today, today included.',
  LAST_365_DAYS: 'The 365 days ending today, today included.',
  THIS_MONTH: 'From the first of this month to today.',
  LAST_MONTH: 'The whole previous calendar month.',
  THIS_YEAR: 'From 1 January to today.',
  LAST_YEAR: 'The whole previous calendar year.',
};

export const PeriodEnum = builder.enumType('Period', {
  description: "A date range relative to today, in the install's time zone (UPSTREAM_TIMEZONE), resolved when the request runs.",
  values: Object.fromEntries(PERIODS.map((period) => [period, { value: period, description: periodDescriptions[period] }])) as {
    [P in Period]: { value: P; description: string };
  },
});

export const DateRangeRef = builder.objectRef<DateRange>('DateRange').implement({
  description: 'The days a figure covers, both included.',
  fields: (t) => ({
    from: t.expose('from', { type: 'Date', description: 'First day.' }),
    to: t.expose('to', { type: 'Date', description: 'Last day.' }),
  }),
});

export const rangeArgs = builder.args((t) => ({
  from: t.field({ type: 'Date', description: 'First day of the range, inclusive (with `to`; or give `period`).' }),
  to: t.field({ type: 'Date', description: 'Last day of the range, inclusive; not before `from`.' }),
  period: t.field({ type: PeriodEnum, description: 'A range relative to today, instead of `from` and `to`.' }),
}));

export interface RangeInput {
  from?: string | null;
  to?: string | null;
  period?: Period | null;
}

export function rangeProblems({ from, to, period }: RangeInput): Problem[] {
  if (period != null) {
    if (from == null && to == null) return [];
    const dates = [from == null ? '' : `from ${from}`, to == null ? '' : `to ${to}`].filter((date) => date !== '').join(' and ');
    return [{ field: ['period'], message: `Give either period or from and to, not both: got period ${period} with ${dates}.` }];
  }
  if (from == null && to == null) return [{ field: ['from'], message: 'Give a period, or from and to: got none of them.' }];
  if (from == null) return [{ field: ['from'], message: `Give both from and to (or a period): got to ${to} and no from.` }];
  if (to == null) return [{ field: ['to'], message: `Give both from and to (or a period): got from ${from} and no to.` }];
  return problemsOf([dateProblem('from', from), dateProblem('to', to), dateRangeProblem(from, to)]);
}

/** `period` is resolved against the request's one instant; anything else is BAD_USER_INPUT. */
export function resolveRange(args: RangeInput, clock: Clock): DateRange {
  assertNoProblems(rangeProblems(args));
  const { from, to, period } = args;
  if (period != null) return resolvePeriod(period, clock.timeZone, clock.now());
  if (from == null || to == null) throw new Error('rangeProblems lets no range without both dates through');
  return { from, to };
}
