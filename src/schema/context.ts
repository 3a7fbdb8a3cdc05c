// What every resolver is given, one per GraphQL request (graphql/context.ts builds it).
import type { FieldNode } from 'graphql';
import type { Clock } from '../analytics/calendar.js';
import type { Page, Stat, StatsQuery } from '../domain.js';
import type { UpstreamSource, UpstreamUsage } from '../upstream/source.js';
import type { Planned } from './plan.js';

export interface GatewayContext extends Planned {
  source: UpstreamSource;
  /** One instant per request. */
  clock: Clock;
  /** What prefetch.ts worked out for a Website.stats field. */
  lookahead: Map<FieldNode, LookedAhead>;
  /** The upstream accepted the key lately (http/known-keys.ts): the look-ahead may start with the website. */
  readonly keyKnown: boolean;
  /** Shared on purpose: yoga copies the context's fields, so a field assigned later would not be seen. */
  readonly usage: Usage;
}

export interface Usage extends UpstreamUsage {
  /** As counted before it ran; null until then. */
  cost: number | null;
}

export interface LookedAhead {
  websiteId: string;
  query: StatsQuery;
  page: Promise<Page<Stat>>;
}
