// The MCP side as the gateway builds it: the tools, their documents (trusted by hash) and what runs them.
import type { GraphQLSchema } from 'graphql';
import type { SettingsOf } from '../settings.js';
import { BUILT_IN_OPERATIONS, loadOperations } from './operations.js';
import type { McpService, RunOperation } from './server.js';
import { type MCP_SETTINGS, toolsOf } from './tools.js';

export interface McpSetup {
  service: McpService;
  /** By SHA-256. */
  documents: Map<string, string>;
}

export function createMcpService(schema: GraphQLSchema, settings: SettingsOf<typeof MCP_SETTINGS>, run: RunOperation): McpSetup {
  const folders = settings.operationsDir === null ? [BUILT_IN_OPERATIONS] : [BUILT_IN_OPERATIONS, settings.operationsDir];
  const tools = toolsOf(schema, loadOperations(schema, folders), { mutations: settings.mutations });
  const documents = new Map(tools.map((tool) => [tool.operation.hash, tool.operation.document]));
  return { service: { tools, schema, run, maxResultBytes: settings.maxResultBytes }, documents };
}
