// Calendar days as integers (days since 1970-01-01, UTC): the stats tables index by day, and
// integer arithmetic keeps a range query free of Date objects.

const MS_PER_DAY = 86_400_000;
const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `2026-03-15` -> day number; null unless it is a real calendar date in exactly that format. */
export function parseYmd(text: string): number | null {
  const match = YMD.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const date = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March 2nd; a real date survives the round trip unchanged.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return ms / MS_PER_DAY;
}

export function formatYmd(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

export function currentUtcDay(): number {
  return Math.floor(Date.now() / MS_PER_DAY);
}

/** 0 = Sunday ... 6 = Saturday. */
export function weekday(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCDay();
}

export function dayStartMs(day: number): number {
  return day * MS_PER_DAY;
}

/** Laravel's JSON date format: microsecond precision, `2024-05-01T10:00:00.000000Z`. */
export function laravelTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
