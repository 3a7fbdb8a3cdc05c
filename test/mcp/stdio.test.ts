// `analytics-graphql-gateway mcp` as a desktop client starts it: the built command spawned by the official
// SDK's stdio client, with ANALYTICS_API_KEY and UPSTREAM_URL (a sandbox on port 0). stdout carries MCP
// messages only (anything else would break the client's reading), the log goes to stderr.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_2, type Stack, dataOf, startStack, until } from '../fixture.js';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

interface Spawned {
  client: Client;
  /** What the command wrote to stderr so far. */
  stderr: () => string;
  /** Errors the client met reading stdout (a line that is not an MCP message). */
  errors: Error[];
}

async function spawnMcp(env: Record<string, string>): Promise<Spawned> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => void errors.push(error);
  await client.connect(transport);
  return { client, stderr: () => stderr, errors };
}

const textOf = (result: CallToolResult): string => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

describe('MCP on stdio', () => {
  let stack: Stack;
  const spawned: Spawned[] = [];
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    for (const { client } of spawned) await client.close();
    await stack.close();
  });

  it("serves the tools with ANALYTICS_API_KEY's websites, MCP alone on stdout, the log on stderr", async () => {
    const mcp = await spawnMcp({ UPSTREAM_URL: stack.sandbox.url, ANALYTICS_API_KEY: KEY_2 });
    spawned.push(mcp);
    const { tools } = await mcp.client.listTools();
    expect(tools).toEqual(JSON.parse(readFileSync(new URL('./tools-list.snapshot.json', import.meta.url), 'utf8')));
    const result = (await mcp.client.callTool({ name: 'list_websites', arguments: { perPage: 100 } })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    const own = dataOf(
      await stack.gql<{ websites: { nodes: { id: string }[] } }>('{ websites(perPage: 100) { nodes { id } } }', {}, KEY_2),
    );
    expect(result.structuredContent).toMatchObject({ websites: { nodes: own.websites.nodes.map(({ id }) => ({ id })) } });
    const summary = (await mcp.client.callTool({
      name: 'website_summary',
      arguments: { websiteId: own.websites.nodes[0]?.id, from: '2026-02-01', to: '2026-02-28' },
    })) as CallToolResult;
    expect(summary.isError, textOf(summary)).toBeFalsy();
    expect(mcp.errors).toEqual([]);
    // The log is written in gathered writes: the line comes within LOG_FLUSH_MS.
    await until('the log line on stderr', () => mcp.stderr().includes('"tool":"list_websites"'));
    expect(mcp.stderr()).not.toContain(KEY_2);
  });

  it('says a made-up key was refused', async () => {
    const mcp = await spawnMcp({ UPSTREAM_URL: stack.sandbox.url, ANALYTICS_API_KEY: 'made-up-key' });
    spawned.push(mcp);
    const result = (await mcp.client.callTool({ name: 'get_website', arguments: { websiteId: '1' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^UNAUTHENTICATED: /);
    expect(mcp.errors).toEqual([]);
  });
});
