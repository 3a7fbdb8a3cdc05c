// What every resolver is given, one per GraphQL request (graphql/context.ts builds it): the request's
// upstream data source, the clock periods are resolved with, what the look-ahead started, and the
// figures the answer reports. Nothing in it outlives the request.
import type { FieldNode } from 'graphql';
import type { Clock } from '../analytics/calendar.js';
import type { Page, Stat, StatsQuery } from '../domain.js';
import type { UpstreamSource, UpstreamUsage } from '../upstream/source.js';
import type { Planned } from './plan.js';

export interface GatewayContext extends Planned {
  /** Every read and write of the upstream, and what a write invalidates. */
  source: UpstreamSource;
  /** One instant per request, taken when its context is made (graphql/context.ts). */
  clock: Clock;
  /** What prefetch.ts worked out ahead for a Website.stats field, so its resolver need not again. */
  lookahead: Map<FieldNode, LookedAhead>;
  /**
   * Whether the upstream accepted the request's key lately (http/known-keys.ts). Only then does the
   * look-ahead start statistics with the website: a stranger's first request makes one upstream call,
   * the one that shows whether its key is refused.
   */
  readonly keyKnown: boolean;
  /**
   * Figures for extensions and logs. A shared object on purpose: yoga copies the context's fields
   * into its own context object, so a field assigned later would not be seen through this one.
   */
  readonly usage: Usage;
}

export interface Usage extends UpstreamUsage {
  /** The operation's cost as counted before it ran (graphql/plugins/use-cost-limit.ts); null until then. */
  cost: number | null;
}

/** What the look-ahead worked out for one Website.stats field of one website. */
export interface LookedAhead {
  websiteId: string;
  query: StatsQuery;
  page: Promise<Page<Stat>>;
}
