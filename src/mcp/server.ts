// One MCP server for one caller (per HTTP request, or once for stdio). A call's arguments are checked first;
// then the operation runs through `run`, a GraphQL request to the gateway itself (gateway.ts), with the
// caller's key: the same admission, limits, cost, cache, metrics, trace and log line (naming the tool).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { GraphQLSchema } from 'graphql';
import { VERSION } from '../version.js';
import { argumentProblems } from './input-schema.js';
import { errorResult, type OperationOutcome, toolResult } from './results.js';
import type { Tool } from './tools.js';

export interface OperationRun {
  documentHash: string;
  operationName: string;
  variables: Record<string, unknown>;
  /** Canonical: `Bearer <token>`. */
  authorization: string;
  toolName: string;
  /** `traceparent`, `tracestate`. */
  traceContext?: Record<string, string>;
  signal?: AbortSignal;
}

export type RunOperation = (run: OperationRun) => Promise<OperationOutcome>;

export interface McpService {
  tools: readonly Tool[];
  schema: GraphQLSchema;
  run: RunOperation;
  maxResultBytes: number;
}

const INSTRUCTIONS =
  'Web analytics of the websites this API key can read. Start with list_websites to find a website id; the other tools take it as websiteId. Dates are YYYY-MM-DD; give a period (LAST_30_DAYS...) or from and to.';

// Shared by every server: one made per stateless call would spend most of its time building Ajv. It checks
// only what a server asks of a client, never done here.
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/** `authorization` null: none was given, every call says so. */
export function createMcpServer(service: McpService, authorization: string | null, traceContext?: Record<string, string>): Server {
  const server = new Server(
    { name: 'analytics-graphql-gateway', version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: SHARED_VALIDATOR },
  );
  const listed = service.tools.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, annotations }));
  const byName = new Map(service.tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name).slice(0, 80)}`);
    const args = request.params.arguments ?? {};
    const problems = argumentProblems(service.schema, tool.operation.operation, args);
    if (problems.length > 0) return errorResult(`Invalid arguments, nothing was run:\n${problems.join('\n')}`);
    if (authorization === null)
      return errorResult('No analytics API key: set ANALYTICS_API_KEY (stdio) or send Authorization: Bearer <key>.');
    try {
      const outcome = await service.run({
        documentHash: tool.operation.hash,
        operationName: tool.operation.name,
        variables: args,
        authorization,
        toolName: tool.name,
        ...(traceContext ? { traceContext } : {}),
        signal: extra.signal,
      });
      return toolResult(outcome, service.maxResultBytes);
    } catch (error) {
      // It could not run at all (the gateway stopping, its own port refused).
      const reason = error instanceof Error ? error.message : String(error);
      return errorResult(`The gateway could not run the operation (${reason}). Try again later.`);
    }
  });
  return server;
}
