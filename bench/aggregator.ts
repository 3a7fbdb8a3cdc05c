// THE AGGREGATOR: A BENCHMARK YARDSTICK, NOT THE PRODUCT. Only the floor pass (`npm run bench -- --passes
// floor`) starts it, as `node dist-bench/bench/aggregator.js`, in its own process like the gateway.
//
// What the dashboard costs when written by hand for that one page: node:http, one undici Pool, the
// dashboard's seven REST reads (bench/scenarios.ts's dashboardCalls) sent at once with the caller's
// Authorization header, each JSON body parsed, mapped to the shape the gateway answers the dashboard
// query with, and written. No GraphQL, no checks, no limits, no cache, no log: the job's own floor.
// Every request, whatever its body, is answered with the dashboard of AGGREGATOR_WEBSITE over
// AGGREGATOR_FROM..AGGREGATOR_TO (the body is read and dropped).
//
// Environment: HOST (127.0.0.1), PORT (0: any free port), UPSTREAM_URL (required), UPSTREAM_CONNECTIONS
// (128, the gateway's default), AGGREGATOR_WEBSITE, AGGREGATOR_FROM, AGGREGATOR_TO (required). It prints the
// line the bench harness waits for: `Aggregator on http://host:port/graphql`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RestCall } from './rest.js';
import { DASHBOARD_STATS, dashboardCalls } from './scenarios.js';
import { PRIVACY, stopOnSignal, yardstickUpstream } from './yardstick-upstream.js';

const upstreamUrl = process.env.UPSTREAM_URL;
const websiteId = process.env.AGGREGATOR_WEBSITE;
const from = process.env.AGGREGATOR_FROM;
const to = process.env.AGGREGATOR_TO;
if (!upstreamUrl || !websiteId || !from || !to) {
  console.error('aggregator: UPSTREAM_URL, AGGREGATOR_WEBSITE, AGGREGATOR_FROM and AGGREGATOR_TO are required');
  process.exit(2);
}
const upstream = yardstickUpstream(upstreamUrl);
const { origin, get } = upstream;
const paths = dashboardCalls({ websiteId, from, to }).map(
  (call: RestCall) => `${call.path}${call.query ? `?${new URLSearchParams(call.query).toString()}` : ''}`,
);

interface WebsiteBody {
  data: { id: number | string; domain: string; privacy: number | string | null };
}
interface StatsBody {
  data: { value: string | number; count: number | string }[];
  meta: { current_page: number; last_page: number; total: number };
}

/** The dashboard's `data`, in the order and shape of the gateway's answer. */
async function dashboard(authorization: string): Promise<unknown> {
  const [site, ...stats] = await Promise.all(paths.map((path) => get(path, authorization)));
  const { data } = site as WebsiteBody;
  const website: Record<string, unknown> = { id: String(data.id), domain: data.domain, privacy: PRIVACY[String(data.privacy)] };
  DASHBOARD_STATS.forEach((spec, i) => {
    const { data: rows, meta } = stats[i] as StatsBody;
    const list: Record<string, unknown> = { nodes: rows.map((row) => ({ value: String(row.value), count: Number(row.count) })) };
    if (spec.selection.includes('totalCount')) list.totalCount = Number(meta.total);
    if (spec.selection.includes('hasNextPage')) list.pageInfo = { hasNextPage: Number(meta.current_page) < Number(meta.last_page) };
    website[spec.alias] = list;
  });
  return { website };
}

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    dashboard(req.headers.authorization ?? '').then(
      (data) => {
        const body = JSON.stringify({ data });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      },
      (error: Error) => {
        const body = JSON.stringify({ errors: [{ message: error.message }] });
        res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      },
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(`Aggregator on http://${address}:${port}/graphql (the bench's yardstick: the dashboard by hand), upstream ${origin}`);
});

stopOnSignal(server, upstream);
