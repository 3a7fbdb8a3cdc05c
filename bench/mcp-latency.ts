// An MCP tool call against the same GraphQL request, one after another, on one gateway:
//
//   npm run build:bench && node dist-bench/bench/mcp-latency.js [--requests 1000] [--cache on|off]
//
// One sandbox and one gateway in this process (LOG_LEVEL=silent). The tool is website_summary of
// website 1 over February (a settled range); the GraphQL request is what the tool call sends to the
// gateway: the operation's trusted hash, its name and the same variables, with the same key. The MCP
// side is the official SDK's client over Streamable HTTP, which POSTs each call to /mcp. Each side is
// warmed up (100 requests), then they alternate, one at a time; it prints each side's p50 and p90 in ms
// (the tool call both through the SDK's client and as a bare POST of its JSON-RPC message) and the tools
// list's size in characters (JSON, as tools/list answers it).
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { startSandbox } from '../src/sandbox/index.js';
import { percentiles } from './percentiles.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '1000' }, cache: { type: 'string', default: 'on' } } });
const requests = Number(values.requests);
const KEY = 'Bearer sandbox-key-1';
const ARGS = { websiteId: '1', from: '2026-02-01', to: '2026-02-28' };

const sandbox = await startSandbox({ port: 0, today: '2026-03-15' });
const gateway = await createGateway(loadConfig({ PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', CACHE: values.cache }));
const tool = gateway.mcp?.tools.find((candidate) => candidate.name === 'website_summary');
if (tool === undefined) throw new Error('no website_summary tool (MCP=off?)');

const client = new Client({ name: 'mcp-latency', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: KEY } } }),
);
const pool = new Pool(gateway.url);
const body = JSON.stringify({
  operationName: tool.operation.name,
  variables: ARGS,
  extensions: { persistedQuery: { version: 1, sha256Hash: tool.operation.hash } },
});

const viaMcp = async (): Promise<void> => {
  const result = await client.callTool({ name: tool.name, arguments: ARGS });
  if (result.isError) throw new Error(`tool call failed: ${JSON.stringify(result.content)}`);
};
// The same call without the SDK's client: what the gateway spends, the client's own work left out.
const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: ARGS } });
const viaPost = async (): Promise<void> => {
  const answer = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: KEY },
    body: rpc,
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200 || text.includes('"isError":true')) throw new Error(`tool call failed: ${text}`);
};
const viaGraphQL = async (): Promise<void> => {
  const answer = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: KEY },
    body,
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200 || text.includes('"errors"')) throw new Error(`GraphQL request failed: ${text}`);
};

const timed = async (run: () => Promise<void>): Promise<number> => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};

for (let i = 0; i < 100; i++) {
  await viaMcp();
  await viaPost();
  await viaGraphQL();
}
const mcp: number[] = [];
const post: number[] = [];
const graphql: number[] = [];
for (let i = 0; i < requests; i++) {
  mcp.push(await timed(viaMcp));
  post.push(await timed(viaPost));
  graphql.push(await timed(viaGraphQL));
}
const { tools } = await client.listTools();
const round = (ms: number): number => Math.round(ms * 1000) / 1000;
const line = (name: string, samples: number[]): string => {
  const { p50, p90 } = percentiles(samples);
  return `${name.padEnd(17)} p50 ${round(p50)} ms  p90 ${round(p90)} ms`;
};
console.log(`CACHE=${values.cache}, ${requests} requests each, alternating`);
console.log(line('mcp (SDK client)', mcp));
console.log(line('mcp (POST)', post));
console.log(line('graphql', graphql));
console.log(`tools/list: ${tools.length} tools, ${JSON.stringify(tools).length} characters`);

await client.close();
await pool.close();
await gateway.close();
await sandbox.close();
