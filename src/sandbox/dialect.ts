// The sandbox's own vocabulary of the upstream, one per install it can play (docs/CONTRACT.md):
// 'contract' is the published contract as a current install answers it (parts A and B), 'legacy'
// the older phpAnalytics 3.x install of part C. The lists are written out here rather than taken
// from the gateway, so a wrong constant in the gateway shows up as a failing call instead of
// being agreed with.

export type Dialect = 'contract' | 'legacy';
export const DIALECTS: readonly Dialect[] = ['contract', 'legacy'];

export function isDialect(value: unknown): value is Dialect {
  return DIALECTS.some((dialect) => dialect === value);
}

/** Statistic names of the published contract (part A). */
export const CONTRACT_STAT_NAMES = [
  'browser',
  'campaign',
  'city',
  'continent',
  'country',
  'device',
  'event',
  'language',
  'operating_system',
  'page',
  'pageview',
  'referrer',
  'screen_resolution',
  'visitor',
] as const;
export type ContractStatName = (typeof CONTRACT_STAT_NAMES)[number];

/** Statistic names of the older install (part C): four renamed, three more. */
export const LEGACY_STAT_NAMES = [
  'browser',
  'campaign',
  'city',
  'continent',
  'country',
  'device',
  'event',
  'landing_page',
  'language',
  'os',
  'page',
  'pageviews',
  'pageviews_hours',
  'referrer',
  'resolution',
  'visitors',
  'visitors_hours',
] as const;
export type LegacyStatName = (typeof LEGACY_STAT_NAMES)[number];

/**
 * The statistics the sandbox generates for a seeded website, under one internal name each: the
 * contract's names, plus the three only the older install has. The wire name is mapped onto it.
 */
export type SeriesName = ContractStatName | 'landing_page' | 'pageviews_hours' | 'visitors_hours';

type RenamedLegacyName = 'os' | 'pageviews' | 'resolution' | 'visitors';

/** The older install's names for four of the contract's statistics. */
const LEGACY_RENAMES: Readonly<Record<RenamedLegacyName, ContractStatName>> = {
  os: 'operating_system',
  pageviews: 'pageview',
  resolution: 'screen_resolution',
  visitors: 'visitor',
};

const isRenamed = (name: LegacyStatName): name is RenamedLegacyName => Object.hasOwn(LEGACY_RENAMES, name);

/** The series a wire name asks for in that dialect; undefined for a name the install does not know. */
export function seriesFor(dialect: Dialect, name: string): SeriesName | undefined {
  if (dialect === 'contract') return CONTRACT_STAT_NAMES.find((known) => known === name);
  const legacy = LEGACY_STAT_NAMES.find((known) => known === name);
  if (legacy === undefined) return undefined;
  // The rest are either the contract's own names or the three extra series.
  return isRenamed(legacy) ? LEGACY_RENAMES[legacy] : legacy;
}

/** per_page values the contract accepts (part A); the older install takes any count. */
export const PER_PAGE_VALUES = [10, 25, 50, 100] as const;
