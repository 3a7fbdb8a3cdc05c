// What the GraphQL endpoint offers besides queries, apart from yoga.ts so that config.ts loads no schema.
import { flag, onOff } from '../settings.js';
export const YOGA_SETTINGS = {
  graphiql: flag('GRAPHIQL', {
    fallback: true,
    productionFallback: false,
    doc: 'serve GraphiQL at /graphql to browsers; false by default when NODE_ENV=production',
  }),
  introspection: flag('INTROSPECTION', {
    fallback: true,
    productionFallback: false,
    doc: 'allow introspection queries; false by default when NODE_ENV=production',
  }),
  federation: onOff('FEDERATION', { fallback: false, doc: 'on: served as a Federation 2 subgraph for a router' }),
};
