// MCP tools, one per named operation: its name in snake_case, its description string, an input schema
// (input-schema.ts) and hints. A mutation is offered only with MCP_MUTATIONS=on, marked destructive.
// Nothing else is a tool: no introspection, no "run this GraphQL".
import type { GraphQLSchema } from 'graphql';
import { TOOL_NAME } from '../http-headers.js';
import { integer, onOff, text } from '../settings.js';
import { inputSchemaOf, type ObjectSchema } from './input-schema.js';
import type { NamedOperation } from './operations.js';

export const MCP_SETTINGS = {
  enabled: onOff('MCP', {
    fallback: true,
    doc: 'MCP tools made of named operations: Streamable HTTP at /mcp and `analytics-graphql-gateway mcp` on stdio',
  }),
  operationsDir: text('MCP_OPERATIONS_DIR', {
    fallback: null,
    unit: 'folder path',
    doc: 'a folder of .graphql files whose named operations become tools too, beside the built-in ones',
  }),
  mutations: onOff('MCP_MUTATIONS', { fallback: false, doc: 'offer the mutation operations as tools (marked destructive)' }),
  apiKey: text('ANALYTICS_API_KEY', {
    fallback: null,
    unit: 'key',
    doc: 'for `analytics-graphql-gateway mcp` (stdio) only: the analytics key its tool calls are made with',
  }),
  maxResultBytes: integer('MCP_MAX_RESULT_BYTES', {
    fallback: 64 * 1024,
    min: 1024,
    max: 16 * 1024 * 1024,
    unit: 'bytes',
    doc: 'largest tool result; a larger one is refused with a hint to ask for fewer rows or a shorter range',
  }),
};

export interface Tool {
  name: string;
  description: string;
  inputSchema: ObjectSchema;
  annotations: { title: string; readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint: false };
  operation: NamedOperation;
}

/** `WebsiteSummary` -> `website_summary`; `getHTTPStatus` -> `get_http_status`. */
export function toolNameOf(operationName: string): string {
  return operationName
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

const titleOf = (name: string): string => {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

export function toolsOf(schema: GraphQLSchema, operations: readonly NamedOperation[], { mutations }: { mutations: boolean }): Tool[] {
  const tools: Tool[] = [];
  const byName = new Map<string, NamedOperation>();
  for (const operation of operations) {
    const isMutation = operation.operation.operation === 'mutation';
    if (isMutation && !mutations) continue;
    const name = toolNameOf(operation.name);
    if (!TOOL_NAME.test(name))
      throw new Error(`MCP operations: ${operation.file}: the tool name ${name} is not 1 to 64 of a-z, 0-9, _ and -`);
    const earlier = byName.get(name);
    if (earlier !== undefined) {
      throw new Error(
        `MCP operations: ${earlier.name} (${earlier.file}) and ${operation.name} (${operation.file}) are both the tool ${name}`,
      );
    }
    byName.set(name, operation);
    const description = operation.operation.description?.value.trim();
    if (!description) throw new Error(`MCP operations: ${operation.file}: ${operation.name} has no description string`);
    tools.push({
      name,
      description,
      inputSchema: inputSchemaOf(schema, operation.operation),
      annotations: isMutation
        ? { title: titleOf(name), readOnlyHint: false, destructiveHint: true, openWorldHint: false }
        : { title: titleOf(name), readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      operation,
    });
  }
  return tools;
}
