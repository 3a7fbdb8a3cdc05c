// Subscription.website, pushed again whenever its data changed. The gateway polls its selection as a
// query (graphql/plugins/use-live.ts, live/hub.ts): this only states the field, its arguments and cost.
import type { Website } from '../domain.js';
import { GatewayError } from '../errors.js';
import { ONE_UPSTREAM_CALL, builder } from './builder.js';
import { WebsiteRef, idArgumentProblems } from './website.js';

builder.subscriptionType({
  description:
    "Live reads, over Server-Sent Events: each pushes its first result at once and then whatever changed, polled within the key's rate limit.",
});

builder.subscriptionField('website', (t) =>
  t.field({
    type: WebsiteRef,
    nullable: true,
    description:
      'One website by id, as `Query.website` reads it, pushed again when its data changes (checked every LIVE_INTERVAL_S or longer). Ends with NOT_FOUND and no data when the caller has no such website.',
    args: { id: t.arg.id({ required: true, description: "The website's id." }) },
    complexity: ONE_UPSTREAM_CALL,
    extensions: { argumentProblems: idArgumentProblems },
    subscribe: (): AsyncIterable<Website> => {
      throw new GatewayError('UNSUPPORTED', 'Subscriptions are served by the gateway (graphql/plugins/use-live.ts).');
    },
    resolve: (website: Website) => website,
  }),
);
