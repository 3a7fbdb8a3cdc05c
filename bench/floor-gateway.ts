// THE FLOOR: A BENCHMARK YARDSTICK, NOT THE PRODUCT. It lives in bench/, which the product build
// (tsconfig.build.json: src/ only) never compiles; only `npm run bench -- --passes floor` starts it, as
// `node dist-bench/bench/floor-gateway.js`, in its own process like the gateway.
//
// A deliberately minimal gateway on the same stack as the real one (graphql-yoga, DataLoader, an
// undici Pool) over the same REST API, answering the bench's dashboard query with the same data, so
// that the gateway's throughput and CPU per request can be compared with what the stack alone costs.
// It has only what that query needs: a schema from SDL with Query.website(id) { id domain privacy }
// and Website.stats(name, from, to, sortBy, sort, perPage, page) { nodes { value count } totalCount
// pageInfo { … } }, the caller's Authorization header forwarded as is, and one DataLoader per request
// that deduplicates identical reads (keyed by the REST path and query string).
//
// What it does not do, on purpose: no limits (admission, depth, aliases, tokens), no cost, no circuit
// breaker, no retries or deadlines, no argument validation, no read cache, no logging, no persisted
// queries, no error mapping (an upstream failure is a plain GraphQL error), no decoding beyond the
// fields above, only the `contract` naming of statistics (the GraphQL name in lower case), and the
// statistics are NOT started together with the website (each Website.stats waits for its website,
// as plain GraphQL execution does; the gateway's prefetch.ts starts them together).
//
// Environment: HOST (127.0.0.1), PORT (0: any free port), UPSTREAM_URL (required),
// UPSTREAM_CONNECTIONS (128, the gateway's default). It prints the line the bench harness waits for:
// `Gateway on http://host:port/graphql`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import DataLoader from 'dataloader';
import { createSchema, createYoga } from 'graphql-yoga';
import { PRIVACY, stopOnSignal, yardstickUpstream } from './yardstick-upstream.js';

const typeDefs = /* GraphQL */ `
  scalar Date

  enum Privacy {
    PUBLIC
    PRIVATE
    PASSWORD
  }

  enum StatName {
    BROWSER
    CAMPAIGN
    CITY
    CONTINENT
    COUNTRY
    DEVICE
    EVENT
    LANGUAGE
    OPERATING_SYSTEM
    PAGE
    PAGEVIEW
    REFERRER
    SCREEN_RESOLUTION
    VISITOR
  }

  enum StatSortField {
    COUNT
    VALUE
  }

  enum SortDirection {
    ASC
    DESC
  }

  type Query {
    website(id: ID!): Website
  }

  type Website {
    id: ID!
    domain: String!
    privacy: Privacy!
    stats(
      name: StatName!
      from: Date
      to: Date
      sortBy: StatSortField = COUNT
      sort: SortDirection = DESC
      perPage: Int = 10
      page: Int = 1
    ): StatList!
  }

  type StatList {
    nodes: [Stat!]!
    totalCount: Int!
    pageInfo: PageInfo!
  }

  type Stat {
    value: String!
    count: Int!
  }

  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    lastPage: Int!
    page: Int!
    perPage: Int!
  }
`;

interface Context {
  /** GET of a path with its query string, deduplicated within the request; resolves to the parsed body. */
  read: DataLoader<string, unknown>;
}

interface StatsArgs {
  name: string;
  from?: string | null;
  to?: string | null;
  sortBy: string;
  sort: string;
  perPage: number;
  page: number;
}

interface WebsiteBody {
  data: { id: number | string; domain: string; privacy: number | string | null };
}

interface StatsBody {
  data: { value: string | number; count: number | string }[];
  meta: { current_page: number; per_page: number; last_page: number; total: number };
}

const upstreamUrl = process.env.UPSTREAM_URL;
if (!upstreamUrl) {
  console.error('floor-gateway: UPSTREAM_URL is required');
  process.exit(2);
}
const upstream = yardstickUpstream(upstreamUrl);
const { origin, get } = upstream;

const schema = createSchema<Context>({
  typeDefs,
  resolvers: {
    Query: {
      website: async (_parent: unknown, args: { id: string }, ctx: Context) => {
        const { data } = (await ctx.read.load(`/websites/${encodeURIComponent(args.id)}`)) as WebsiteBody;
        return { id: String(data.id), domain: data.domain, privacy: PRIVACY[String(data.privacy)] };
      },
    },
    Website: {
      stats: async (parent: { id: string }, args: StatsArgs, ctx: Context) => {
        const query = new URLSearchParams({
          name: args.name.toLowerCase(),
          ...(args.from ? { from: args.from } : {}),
          ...(args.to ? { to: args.to } : {}),
          sort_by: args.sortBy.toLowerCase(),
          sort: args.sort.toLowerCase(),
          per_page: String(args.perPage),
          page: String(args.page),
        });
        const { data, meta } = (await ctx.read.load(`/stats/${encodeURIComponent(parent.id)}?${query}`)) as StatsBody;
        const lastPage = Math.max(1, Number(meta.last_page));
        const page = Number(meta.current_page);
        return {
          nodes: data.map((row) => ({ value: String(row.value), count: Number(row.count) })),
          totalCount: Number(meta.total),
          pageInfo: { hasNextPage: page < lastPage, hasPreviousPage: page > 1, lastPage, page, perPage: Number(meta.per_page) },
        };
      },
    },
  },
});

const yoga = createYoga<object, Context>({
  schema,
  graphqlEndpoint: '/graphql',
  graphiql: false,
  landingPage: false,
  logging: false,
  context: ({ request }) => {
    const authorization = request.headers.get('authorization') ?? '';
    // No batch endpoint upstream: each distinct read is sent at once, the cache shares it.
    return {
      read: new DataLoader<string, unknown>(async ([path]) => [await get(path as string, authorization).catch((error: Error) => error)], {
        batch: false,
      }),
    };
  },
});

const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(`Gateway on http://${address}:${port}/graphql (the bench floor: a yardstick, not the product), upstream ${origin}`);
});

stopOnSignal(server, upstream);
