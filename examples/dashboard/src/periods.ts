// The periods of the schema's Period enum, as the picker names them, and a custom range.
import type { Comparison, Period } from './gql/graphql';

/** Every Period of schema.graphql: the compiler fails here when the schema gains or loses one. */
export const PERIODS: Record<Period, string> = {
  TODAY: 'Today',
  YESTERDAY: 'Yesterday',
  LAST_7_DAYS: 'Last 7 days',
  LAST_30_DAYS: 'Last 30 days',
  LAST_90_DAYS: 'Last 90 days',
  LAST_365_DAYS: 'Last 365 days',
  THIS_MONTH: 'This month',
  LAST_MONTH: 'Last month',
  THIS_YEAR: 'This year',
  LAST_YEAR: 'Last year',
};

/** A period of the schema, or days of the user's choosing (YYYY-MM-DD, both included). */
export type Range = { period: Period } | { from: string; to: string };

/** The variables a query takes for a range. */
export function rangeVariables(range: Range): { period?: Period; from?: string; to?: string } {
  return 'period' in range ? { period: range.period } : { from: range.from, to: range.to };
}

export function isPeriod(value: string): value is Period {
  return Object.hasOwn(PERIODS, value);
}

/**
 * What a range is compared with: a year (this one so far, or the last) with the same dates a year
 * earlier, which for last year is the calendar year before; any other range with as many days just
 * before it.
 */
export function comparisonOf(range: Range): Comparison {
  return 'period' in range && (range.period === 'LAST_YEAR' || range.period === 'THIS_YEAR') ? 'PREVIOUS_YEAR' : 'PREVIOUS_PERIOD';
}
