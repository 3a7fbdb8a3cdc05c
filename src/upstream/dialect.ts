// How statistics are named on the wire differs between installs (docs/CONTRACT.md part C: an older
// version calls four of them `os`, `pageviews`, `resolution`, `visitors` and has three more). The
// GraphQL names stay; this module learns, per upstream, which wire name each statistic has, and
// learns it again when the upstream refuses it later (upgraded or rolled back while the gateway
// runs), or pins them from configuration.
import type { StatName } from '../domain.js';
import { choice } from '../settings.js';
import { isStatNameRefused, unsupportedStat } from './errors.js';

/** `auto`: learn from the upstream's answers. `contract`/`legacy`: use that family's names only. */
export type StatNaming = 'auto' | 'contract' | 'legacy';
const STAT_NAMINGS: readonly [StatNaming, ...StatNaming[]] = ['auto', 'contract', 'legacy'];

/** UPSTREAM_STAT_NAMES: the statistics' wire names, learnt from the upstream or pinned to a family. */
export const DIALECT_SETTINGS = {
  statNames: choice('UPSTREAM_STAT_NAMES', STAT_NAMINGS, {
    fallback: 'auto',
    doc: "wire names of statistics: auto learns them from the install; contract or legacy pins a family's",
  }),
};
/** UPSTREAM_STAT_NAMES when unset: learnt from the upstream. */

/** Wire names by install family; a statistic missing from a family does not exist there. */
const WIRE_NAMES: Readonly<Record<StatName, { contract?: string; legacy?: string }>> = {
  browser: { contract: 'browser', legacy: 'browser' },
  campaign: { contract: 'campaign', legacy: 'campaign' },
  city: { contract: 'city', legacy: 'city' },
  continent: { contract: 'continent', legacy: 'continent' },
  country: { contract: 'country', legacy: 'country' },
  device: { contract: 'device', legacy: 'device' },
  event: { contract: 'event', legacy: 'event' },
  landing_page: { legacy: 'landing_page' },
  language: { contract: 'language', legacy: 'language' },
  operating_system: { contract: 'operating_system', legacy: 'os' },
  page: { contract: 'page', legacy: 'page' },
  pageview: { contract: 'pageview', legacy: 'pageviews' },
  pageview_hour: { legacy: 'pageviews_hours' },
  referrer: { contract: 'referrer', legacy: 'referrer' },
  screen_resolution: { contract: 'screen_resolution', legacy: 'resolution' },
  visitor: { contract: 'visitor', legacy: 'visitors' },
  visitor_hour: { legacy: 'visitors_hours' },
};

/** The wire names to try for a statistic, the published contract's first. */
export function wireNameCandidates(name: StatName, naming: StatNaming): string[] {
  const { contract, legacy } = WIRE_NAMES[name];
  const families = naming === 'auto' ? [contract, legacy] : [naming === 'contract' ? contract : legacy];
  return [...new Set(families.filter((wire): wire is string => wire !== undefined))];
}

export interface StatNames {
  /**
   * Runs `read` with the statistic's wire name. While the name is not known yet, a refusal of the
   * name (a read, so safe to repeat) moves on to the next candidate; what worked is remembered. When
   * a remembered name is refused later, the other candidates are tried once and what works is
   * remembered instead. When no candidate is accepted, the statistic is UNSUPPORTED, from then on
   * without an upstream call.
   */
  read<T>(name: StatName, read: (wireName: string) => Promise<T>): Promise<T>;
}

export function createStatNames(naming: StatNaming): StatNames {
  /** A wire name, or null for a statistic this install does not have. */
  const known = new Map<StatName, string | null>();
  /** Settles (never rejects) when the request that is learning a name is done with it. */
  const learning = new Map<StatName, Promise<void>>();

  /**
   * Called right after a wait for `learning` has found it empty, with no await between the two, so
   * that one request at a time learns a statistic's name.
   */
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
      // Concurrent reads of a statistic wait for the one that is learning its name, so the upstream
      // sees no refused name from the requests that come meanwhile. The loop awaits only while
      // someone is learning, so nothing runs between its end and the check of `known`.
      for (let pending = learning.get(name); pending !== undefined; pending = learning.get(name)) await pending;
      const wireName = known.get(name);
      if (wireName === null) throw unsupportedStat(name);
      if (wireName === undefined) return learn(name, read);
      try {
        return await read(wireName);
      } catch (error) {
        if (!isStatNameRefused(error)) throw error;
        // The upstream refused a name it accepted before: it was upgraded or rolled back. Reads that
        // were already on their way with the old name are refused too; the first of them to get
        // here learns again (the other name only), the others wait for it and read once with what
        // it learnt.
        for (let pending = learning.get(name); pending !== undefined; pending = learning.get(name)) await pending;
        const relearnt = known.get(name);
        if (relearnt === null) throw unsupportedStat(name);
        if (relearnt === undefined || relearnt === wireName) return learn(name, read, wireName);
        // A refusal of this name too means the upstream changed again meanwhile: passed on, and the
        // next request learns again.
        return read(relearnt);
      }
    },
  };
}
