// Calendar days as `YYYY-MM-DD` strings, counted in UTC so that no clock or time zone moves them:
// a day is a date, not an instant. "Today" is the only instant, resolved in the upstream's time zone.
import { z } from 'zod';
import { custom, shown } from '../settings.js';

const MS_PER_DAY = 86_400_000;

/** "Today" is in the upstream's time zone. */
export interface Clock {
  now(): number;
  timeZone: string;
}

export const CALENDAR_SETTINGS = {
  upstreamTimeZone: custom(
    'UPSTREAM_TIMEZONE',
    z.string().refine(isTimeZone, {
      error: (issue) => `UPSTREAM_TIMEZONE must be an IANA time zone such as UTC or Europe/Paris, got "${shown(issue.input)}"`,
    }),
    {
      fallback: 'UTC',
      shown: 'UTC',
      unit: 'IANA time zone',
      doc: 'the install\'s time zone: which day is "today", and so which statistics are settled',
    },
  ),
};

function isTimeZone(timeZone: string): boolean {
  try {
    dayIn(timeZone, Date.now());
    return true;
  } catch {
    return false;
  }
}

// The IANA names of UTC itself (links to Etc/UTC and Etc/GMT, any case): in these, today is told without
// Intl, which spares its ICU data and a formatter (docs/performance.md, memory).
const UTC_NAMES = ['UTC', 'UCT', 'GMT', 'GMT0', 'GMT+0', 'GMT-0', 'Greenwich', 'Universal', 'Zulu'];
const UTC_ZONES = new Set(UTC_NAMES.flatMap((name) => [name.toLowerCase(), `etc/${name.toLowerCase()}`]));

export const isUtcZone = (timeZone: string): boolean => UTC_ZONES.has(timeZone.toLowerCase());

// One formatter per zone met: building one costs far more than formatting with it.
const formatters = new Map<string, Intl.DateTimeFormat>();

export function dayIn(timeZone: string, epochMs: number): string {
  if (isUtcZone(timeZone)) return toDay(epochMs);
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  return formatter.format(epochMs);
}

const toMs = (day: string): number => Date.parse(`${day}T00:00:00Z`);
// The last day told: a request asks for its "today" several times (each statistic read, its cost).
let lastDayNumber = Number.NaN;
let lastDay = '';

function toDay(ms: number): string {
  const dayNumber = Math.floor(ms / MS_PER_DAY);
  if (dayNumber !== lastDayNumber) {
    lastDay = new Date(ms).toISOString().slice(0, 10);
    lastDayNumber = dayNumber;
  }
  return lastDay;
}

export function addDays(day: string, days: number): string {
  return toDay(toMs(day) + days * MS_PER_DAY);
}

/** Days from `from` to `to`, both included (1 for the same day). */
export function daysBetween(from: string, to: string): number {
  return Math.round((toMs(to) - toMs(from)) / MS_PER_DAY) + 1;
}

/** Every day from `from` to `to`, both included, oldest first. */
export function eachDay(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = toMs(from), end = toMs(to); ms <= end; ms += MS_PER_DAY) days.push(toDay(ms));
  return days;
}

export const monthStart = (day: string): string => `${day.slice(0, 7)}-01`;

export function monthEnd(day: string): string {
  const [year, month] = [Number(day.slice(0, 4)), Number(day.slice(5, 7))];
  return toDay(Date.UTC(year, month, 0)); // day 0 of the next month
}

/** The Monday of `day`'s ISO week. */
export function isoWeekStart(day: string): string {
  const weekday = new Date(toMs(day)).getUTCDay(); // 0 Sunday .. 6 Saturday
  return addDays(day, -((weekday + 6) % 7));
}

/** The same date a year earlier; 29 February becomes 28 February. */
export function yearEarlier(day: string): string {
  const year = Number(day.slice(0, 4)) - 1;
  const monthDay = day.slice(5);
  const candidate = `${String(year).padStart(4, '0')}-${monthDay}`;
  return monthDay === '02-29' && toDay(toMs(candidate)) !== candidate ? `${String(year).padStart(4, '0')}-02-28` : candidate;
}
