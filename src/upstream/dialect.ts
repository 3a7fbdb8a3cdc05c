// Statistics' wire names differ between installs (docs/CONTRACT.md part C). The GraphQL names stay; this
// module learns each statistic's wire name per upstream, again when it is refused later (an upgrade or a
// rollback while the gateway runs), or pins them from configuration.
import type { StatName } from '../domain.js';
import { choice } from '../settings.js';
import { isStatNameRefused, unsupportedStat } from './errors.js';

/** `auto`: learn from the upstream's answers. `contract`/`legacy`: use that family's names only. */
export type StatNaming = 'auto' | 'contract' | 'legacy';
const STAT_NAMINGS: readonly [StatNaming, ...StatNaming[]] = ['auto', 'contract', 'legacy'];

export const DIALECT_SETTINGS = {
  statNames: choice('UPSTREAM_STAT_NAMES', STAT_NAMINGS, {
    fallback: 'auto',
    doc: "wire names of statistics: auto learns them from the install; contract or legacy pins a family's",
  }),
};

/** The older family's names where they differ from the GraphQL's, which the contract uses. */
const LEGACY_NAMES: Partial<Record<StatName, string>> = {
  operating_system: 'os',
  pageview: 'pageviews',
  pageview_hour: 'pageviews_hours',
  screen_resolution: 'resolution',
  visitor: 'visitors',
  visitor_hour: 'visitors_hours',
};
/** What only the older family has. */
const LEGACY_ONLY: ReadonlySet<StatName> = new Set(['landing_page', 'pageview_hour', 'visitor_hour']);

/** The wire names to try for a statistic, the published contract's first. */
export function wireNameCandidates(name: StatName, naming: StatNaming): string[] {
  const contract = LEGACY_ONLY.has(name) ? undefined : name;
  const legacy = LEGACY_NAMES[name] ?? name;
  const families = naming === 'auto' ? [contract, legacy] : [naming === 'contract' ? contract : legacy];
  return [...new Set(families.filter((wire): wire is string => wire !== undefined))];
}

export interface StatNames {
  /**
   * Runs `read` with the statistic's wire name, moving on to the next candidate while one is refused; what
   * worked is remembered. With none accepted, the statistic is UNSUPPORTED, from then on without a call.
   */
  read<T>(name: StatName, read: (wireName: string) => Promise<T>): Promise<T>;
}

export function createStatNames(naming: StatNaming): StatNames {
  /** A wire name, or null for a statistic this install does not have. */
  const known = new Map<StatName, string | null>();
  /** Settles (never rejects) when the request that is learning a name is done with it. */
  const learning = new Map<StatName, Promise<void>>();

  /** Called right after a wait found no one learning, with no await between: one learner at a time. */
  async function learn<T>(name: StatName, read: (wireName: string) => Promise<T>, refused?: string): Promise<T> {
    const { promise, resolve: done } = Promise.withResolvers<void>();
    learning.set(name, promise);
    try {
      for (const wireName of wireNameCandidates(name, naming).filter((candidate) => candidate !== refused)) {
        try {
          const result = await read(wireName);
          known.set(name, wireName);
          return result;
        } catch (error) {
          if (!isStatNameRefused(error)) throw error; // says nothing about the name: learn another time
        }
      }
      known.set(name, null);
      throw unsupportedStat(name);
    } finally {
      learning.delete(name);
      done();
    }
  }

  return {
    async read(name, read) {
      // Reads wait for the one learning the name, so the upstream sees no refused name from them. The loop
      // awaits only while someone is learning: nothing runs between its end and the check of `known`.
      for (let pending = learning.get(name); pending !== undefined; pending = learning.get(name)) await pending;
      const wireName = known.get(name);
      if (wireName === null) throw unsupportedStat(name);
      if (wireName === undefined) return learn(name, read);
      try {
        return await read(wireName);
      } catch (error) {
        if (!isStatNameRefused(error)) throw error;
        // A name accepted before is refused: the upstream changed. The first refused read learns again
        // (the other names only); the others wait for it and read once with what it learnt.
        for (let pending = learning.get(name); pending !== undefined; pending = learning.get(name)) await pending;
        const relearnt = known.get(name);
        if (relearnt === null) throw unsupportedStat(name);
        if (relearnt === undefined || relearnt === wireName) return learn(name, read, wireName);
        // Refused too: the upstream changed again meanwhile; the next request learns again.
        return read(relearnt);
      }
    },
  };
}
