// The MCP endpoint as a client meets it: the official SDK's client over real HTTP to a gateway on port 0,
// backed by the sandbox. Every tool is called; a key reads its own websites only; a made-up key, a wrong
// argument, a rate limit and a result over the maximum are errors a model can read; a repeat is answered
// from the cache; the request log names the tool and never the key; /mcp refuses no key, GET, DELETE and
// a foreign Origin.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, KEY_2, type Stack, dataOf, restCalls, until, useStack } from '../fixture.js';
import { postToMcp } from './post.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/** An SDK client connected to `gateway`'s /mcp with `key` (null: no Authorization header). */
async function connect(stack: Stack, key: string | null = KEY_1): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/mcp`), {
    requestInit: key === null ? {} : { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const textOf = (result: CallToolResult): string => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

/** The data of a result that must have succeeded: its text and its structured content are the same JSON. */
function dataOfTool<T>(result: CallToolResult): T {
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

interface WebsitesData {
  websites: { totalCount: number; nodes: { id: string; domain: string }[] };
}

describe('MCP over HTTP', () => {
  const lines: string[] = [];
  const stack = useStack({ gateway: { logger: pino({ level: 'info', base: null }, { write: (line: string) => void lines.push(line) }) } });

  it('lists the tools: names, descriptions and flat input schemas, as the snapshot has them', async () => {
    const client = await connect(stack);
    const { tools } = await client.listTools();
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot('./tools-list.snapshot.json');
    expect(tools.map((tool) => tool.name)).toEqual([
      'compare_ranges',
      'get_website',
      'list_websites',
      'top_values',
      'traffic_series',
      'website_summary',
    ]);
    for (const tool of tools) expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });

  it('calls every tool, each answering the data of its operation', async () => {
    const client = await connect(stack);
    const websites = dataOfTool<WebsitesData>(await call(client, 'list_websites', { search: 'acme', perPage: 10 }));
    expect(websites.websites.nodes.map((website) => website.domain)).toContain('acme-analytics.com');
    const id = websites.websites.nodes.find((website) => website.domain === 'acme-analytics.com')?.id;
    expect(id).toBeDefined();
    const website = dataOfTool<{ website: { domain: string } }>(await call(client, 'get_website', { websiteId: id }));
    expect(website.website.domain).toBe('acme-analytics.com');
    const summary = dataOfTool<{ website: { summary: { current: { visitors: number }; previous: { visitors: number } } } }>(
      await call(client, 'website_summary', { websiteId: id, period: 'LAST_MONTH' }),
    );
    expect(summary.website.summary.current.visitors).toBeGreaterThan(0);
    expect(summary.website.summary.previous.visitors).toBeGreaterThan(0);
    const top = dataOfTool<{ stats: { totalCount: number; nodes: { label: string; count: number }[] } }>(
      await call(client, 'top_values', { websiteId: id, statistic: 'PAGE', from: '2026-02-01', to: '2026-02-28', perPage: 10 }),
    );
    expect(top.stats.nodes.length).toBe(10);
    expect(top.stats.nodes[0]?.count).toBeGreaterThanOrEqual(top.stats.nodes[9]?.count ?? 0);
    const series = dataOfTool<{ website: { series: { points: { date: string; count: number }[] } } }>(
      await call(client, 'traffic_series', { websiteId: id, metric: 'PAGEVIEWS', interval: 'WEEK', from: '2026-02-02', to: '2026-03-01' }),
    );
    expect(series.website.series.points.map((point) => point.date)).toEqual(['2026-02-02', '2026-02-09', '2026-02-16', '2026-02-23']);
    const compared = dataOfTool<{ website: { first: { current: { visitors: number } }; second: { current: { visitors: number } } } }>(
      await call(client, 'compare_ranges', {
        websiteId: id,
        from: '2026-01-01',
        to: '2026-01-31',
        secondFrom: '2026-02-01',
        secondTo: '2026-02-28',
      }),
    );
    expect(compared.website.first.current.visitors).toBeGreaterThan(0);
    expect(compared.website.second.current.visitors).toBeGreaterThan(0);
    // The same figures as the GraphQL endpoint answers.
    const direct = dataOf(
      await stack.gql<{ website: { summary: { current: { visitors: number } } } }>(
        'query($id: ID!) { website(id: $id) { summary(from: "2026-01-01", to: "2026-01-31") { current { visitors } } } }',
        { id },
      ),
    );
    expect(compared.website.first.current.visitors).toBe(direct.website.summary.current.visitors);
  });

  it("gives a key its own websites only, and another key's website as NOT_FOUND", async () => {
    const own = dataOf(await stack.gql<WebsitesData>('{ websites(perPage: 100) { totalCount nodes { id domain } } }', {}, KEY_2));
    const client = await connect(stack, KEY_2);
    const listed = dataOfTool<WebsitesData>(await call(client, 'list_websites', { perPage: 100 }));
    expect(listed.websites.nodes.map((website) => website.id)).toEqual(own.websites.nodes.map((website) => website.id));
    const others = dataOf(await stack.gql<WebsitesData>('{ websites(perPage: 100) { totalCount nodes { id domain } } }', {}, KEY_1));
    const foreign = others.websites.nodes[0]?.id;
    const refused = await call(client, 'get_website', { websiteId: foreign });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^NOT_FOUND: .*list_websites/);
    expect(refused.structuredContent).toBeUndefined();
  });

  it('answers a made-up key with an error that says the key was refused, and never shows it', async () => {
    const client = await connect(stack, 'made-up-key-4711');
    const refused = await call(client, 'list_websites', {});
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^UNAUTHENTICATED: /);
    expect(textOf(refused)).not.toContain('4711');
  });

  it('refuses a wrong argument before anything runs, naming it', async () => {
    const client = await connect(stack);
    stack.sandbox.log.reset();
    for (const [args, said] of [
      [{ websiteId: '1', statistic: 'PAGES', period: 'LAST_7_DAYS' }, /Argument "statistic" got invalid value "PAGES"/],
      [{ statistic: 'PAGE' }, /Argument "websiteId" of required type "ID!" was not provided/],
      [{ websiteId: '1', statistic: 'PAGE', from: '2026-02-30', to: '2026-03-01' }, /Argument "from" got invalid value "2026-02-30"/],
      [{ websiteId: '1', statistic: 'PAGE', query: '{ websites { totalCount } }' }, /Unknown argument "query"/],
    ] as const) {
      const refused = await call(client, 'top_values', args);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(said);
    }
    // A value the schema takes but the gateway's checks refuse: refused before the upstream too.
    const tooMany = await call(client, 'top_values', { websiteId: '1', statistic: 'PAGE', period: 'LAST_7_DAYS', perPage: 1000 });
    expect(textOf(tooMany)).toMatch(/^BAD_USER_INPUT: .*perPage/);
    expect(restCalls(stack.sandbox)).toEqual([]);
  });

  it('writes one request log line per call, naming the tool and the operation, never the key', async () => {
    const client = await connect(stack);
    lines.length = 0;
    dataOfTool(await call(client, 'get_website', { websiteId: '1' }));
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'graphql request');
    expect(logged).toEqual([expect.objectContaining({ operation: 'GetWebsite', tool: 'get_website', outcome: 'ok', upstreamCalls: 1 })]);
    expect(lines.join('')).not.toContain(KEY_1);
  });

  it('refuses no key with 401 and WWW-Authenticate: Bearer, GET and DELETE with 405, a foreign Origin with 403', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };
    const post = (headers: Record<string, string>) => postToMcp(stack.gateway.url, initialize, headers);
    const keyless = await post({});
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await keyless.json()) as { error: { message: string } }).error.message).toMatch(/Authorization: Bearer/);
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(`${stack.gateway.url}/mcp`, { method, headers: { authorization: `Bearer ${KEY_1}` } });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
    }
    // What is not a JSON-RPC message, or asks for neither JSON nor a stream, is told so.
    const garbled = await postToMcp(stack.gateway.url, '{"jsonrpc": "2.0", "id": 1,', { authorization: `Bearer ${KEY_1}` });
    expect(garbled.status).toBe(400);
    expect(((await garbled.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const html = await post({ authorization: `Bearer ${KEY_1}`, accept: 'text/html' });
    expect(html.status).toBe(406);
    const foreign = await post({ authorization: `Bearer ${KEY_1}`, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const local = await post({ authorization: `Bearer ${KEY_1}`, origin: 'http://localhost:3000' });
    expect(local.status).toBe(200);
    expect(((await local.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('analytics-graphql-gateway');
    expect(local.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const client = await connect(stack);
    await expect(client.callTool({ name: 'execute_graphql', arguments: { query: '{ websites { totalCount } }' } })).rejects.toThrow(
      /Unknown tool/,
    );
  });
});

describe('MCP over HTTP, with the cache on', () => {
  const lines: string[] = [];
  const stack = useStack({
    env: { CACHE: 'on' },
    gateway: { logger: pino({ level: 'info', base: null }, { write: (line: string) => void lines.push(line) }) },
  });

  it('answers a repeated call from the cache: no second upstream call', async () => {
    const client = await connect(stack);
    const args = { websiteId: '1', statistic: 'COUNTRY', from: '2026-02-01', to: '2026-02-28' };
    const first = dataOfTool(await call(client, 'top_values', args));
    const calls = restCalls(stack.sandbox);
    expect(calls.length).toBeGreaterThan(0);
    const again = dataOfTool(await call(client, 'top_values', args));
    expect(again).toEqual(first);
    expect(restCalls(stack.sandbox)).toEqual(calls);
    // The repeat is a stored answer, sent before GraphQL runs: its line names the tool too.
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'graphql request');
    expect(logged.map(({ tool, storedAnswer }) => ({ tool, storedAnswer }))).toEqual([
      { tool: 'top_values', storedAnswer: undefined },
      { tool: 'top_values', storedAnswer: true },
    ]);
  });
});

describe('MCP over HTTP, at the limits', () => {
  const stack = useStack({ env: { MCP_MAX_RESULT_BYTES: '1024' } });

  it('refuses a result over MCP_MAX_RESULT_BYTES, saying how to ask for less', async () => {
    const client = await connect(stack);
    const large = await call(client, 'traffic_series', { websiteId: '1', metric: 'VISITORS', from: '2026-01-01', to: '2026-03-01' });
    expect(large.isError).toBe(true);
    expect(textOf(large)).toMatch(/over this server's maximum of 1024 \(MCP_MAX_RESULT_BYTES\).*interval/);
  });

  it("gives a rate limit as an error with the upstream's retry time", async () => {
    const client = await connect(stack);
    // One call a minute per key: the second waits longer than a request's deadline.
    stack.sandbox.setKnobs({ rateLimit: { limit: 1, windowMs: 60_000 } });
    try {
      dataOfTool(await call(client, 'get_website', { websiteId: '1' }));
      const limited = await call(client, 'get_website', { websiteId: '1' });
      expect(limited.isError).toBe(true);
      expect(textOf(limited)).toMatch(/^RATE_LIMITED: .* Retry after \d+ seconds\./);
    } finally {
      stack.sandbox.setKnobs({ rateLimit: null });
    }
  });
});

describe("MCP over HTTP, with the operator's tools, writes and trusted documents only", () => {
  const folder = mkdtempSync(join(tmpdir(), 'mcp-operations-'));
  writeFileSync(
    join(folder, 'favorites.graphql'),
    '"""The favorite websites of this key."""\nquery FavoriteSites { websites(favorite: true, perPage: 100) { nodes { id domain } } }\n',
  );
  const trusted = '{ websites { totalCount } }';
  const manifest = join(folder, 'persisted-documents.json');
  writeFileSync(manifest, JSON.stringify({ [`sha256:${createHash('sha256').update(trusted).digest('hex')}`]: trusted }));
  const stack = useStack({
    env: { MCP_OPERATIONS_DIR: folder, MCP_MUTATIONS: 'on', PERSISTED_DOCUMENTS: manifest, TRUSTED_DOCUMENTS_ONLY: 'true' },
  });

  it('offers them as tools, runs them by hash where only trusted documents run, and writes', async () => {
    const client = await connect(stack, KEY_2);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'set_favorite')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.map((tool) => tool.name)).toContain('favorite_sites');
    // Free GraphQL is refused here; the tools' documents are trusted.
    expect((await stack.gql('{ websites { nodes { id } } }', {}, KEY_2)).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const [first] = dataOfTool<WebsitesData>(await call(client, 'list_websites', {})).websites.nodes;
    if (first === undefined) throw new Error('KEY_2 has no website');
    try {
      const set = dataOfTool<{ updateWebsite: { website: { favorite: boolean } } }>(
        await call(client, 'set_favorite', { websiteId: first.id, favorite: true }),
      );
      expect(set.updateWebsite.website.favorite).toBe(true);
      const favorites = dataOfTool<WebsitesData>(await call(client, 'favorite_sites', {}));
      expect(favorites.websites.nodes.map((website) => website.id)).toContain(first.id);
    } finally {
      dataOfTool(await call(client, 'set_favorite', { websiteId: first.id, favorite: false }));
    }
  });
});

describe('MCP over HTTP, with one request slot and a slow install', () => {
  // Nothing of the gateway's own cuts a call within the test: only the client's leaving can.
  const stack = useStack({
    env: { UPSTREAM_TIMEOUT_MS: '300000', REQUEST_DEADLINE_MS: '300000', MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0' },
  });

  /** A get_website call POSTed as it is, that the returned controller's abort() makes its client leave. */
  const slowCall = (): { answer: Promise<Response>; leave: () => void } => {
    const leaving = new AbortController();
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_website', arguments: { websiteId: '2' } } };
    const answer = postToMcp(stack.gateway.url, message, { authorization: `Bearer ${KEY_1}` }, leaving.signal);
    return { answer, leave: () => leaving.abort() };
  };

  it('stops a call whose client left: its upstream call is cut, not waited for', async () => {
    stack.sandbox.setKnobs({ latencyMs: 120_000 });
    try {
      const call = slowCall();
      await until('the upstream call', () => stack.sandbox.log.entries.length > 0);
      call.leave();
      await expect(call.answer).rejects.toThrow();
      await until('the upstream call cut', () => stack.sandbox.log.entries.every((entry) => entry.endedAt !== null && entry.status === 0));
    } finally {
      stack.sandbox.setKnobs({ latencyMs: 0 });
    }
  });

  it("holds tool calls to admission as GraphQL requests: a full gateway's answer says when to retry", async () => {
    const client = await connect(stack);
    stack.sandbox.setKnobs({ latencyMs: 120_000 });
    const holder = slowCall();
    try {
      await until('the slot taken', () => stack.sandbox.log.entries.length > 0);
      const refused = await call(client, 'get_website', { websiteId: '1' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^OVERLOADED: .* Retry after 1 seconds\./);
    } finally {
      holder.leave();
      await holder.answer.catch(() => undefined);
      stack.sandbox.setKnobs({ latencyMs: 0 });
    }
  });
});

describe('MCP=off', () => {
  const stack = useStack({ env: { MCP: 'off' } });

  it('serves no /mcp', async () => {
    const answer = await postToMcp(
      stack.gateway.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${KEY_1}` },
    );
    expect(answer.status).toBe(404);
    expect(stack.gateway.mcp).toBeNull();
  });
});
