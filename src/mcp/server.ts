// One MCP server for one caller: the tools, and what calls them. A call's arguments are checked
// against its operation's variables first; then the operation runs through `run`, the gateway's own
// handling of a GraphQL request (gateway.ts), with the caller's key: the document by its trusted hash,
// the same admission, limits, cost, cache, stored answers, metrics, trace and log line (naming the tool).
// Made per HTTP request (stateless) or once for a stdio session.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { GraphQLSchema } from 'graphql';
import { VERSION } from '../version.js';
import { argumentProblems } from './input-schema.js';
import { errorResult, failedResult, invalidArguments, type OperationOutcome, toolResult } from './results.js';
import type { Tool } from './tools.js';

/** One operation to run as a GraphQL request would be. */
export interface OperationRun {
  /** SHA-256 of the trusted document, hex. */
  documentHash: string;
  operationName: string;
  variables: Record<string, unknown>;
  /** The caller's key in its canonical form, `Bearer <token>`. */
  authorization: string;
  /** The tool, for the request's log line. */
  toolName: string;
  /** The client's W3C trace context (`traceparent`, `tracestate`), which the operation's spans continue. */
  traceContext?: Record<string, string>;
  signal?: AbortSignal;
}

/** The gateway's own handling of a GraphQL request, given to the MCP side by the composition root. */
export type RunOperation = (run: OperationRun) => Promise<OperationOutcome>;

export interface McpService {
  tools: readonly Tool[];
  schema: GraphQLSchema;
  run: RunOperation;
  maxResultBytes: number;
}

/** Said to the client at initialization: how the tools fit together. */
const INSTRUCTIONS =
  'Web analytics of the websites this API key can read. Start with list_websites to find a website id; the other tools take it as websiteId. Dates are YYYY-MM-DD; give a period (LAST_30_DAYS...) or from and to.';

/** The tools as tools/list gives them. */
export function listedTools(
  tools: readonly Tool[],
): { name: string; description: string; inputSchema: Tool['inputSchema']; annotations: Tool['annotations'] }[] {
  return tools.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, annotations }));
}

/**
 * The JSON Schema validator every server shares: a server makes one of its own otherwise, and building
 * its Ajv took most of a stateless call's time. It checks only what a server asks of a client, never done here.
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/** The MCP server of one caller, `authorization` its key (null: none was given, every call says so). */
export function createMcpServer(service: McpService, authorization: string | null, traceContext?: Record<string, string>): Server {
  const server = new Server(
    { name: 'analytics-graphql-gateway', version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: SHARED_VALIDATOR },
  );
  const listed = listedTools(service.tools);
  const byName = new Map(service.tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name).slice(0, 80)}`);
    const args = request.params.arguments ?? {};
    const problems = argumentProblems(service.schema, tool.operation.operation, args);
    if (problems.length > 0) return invalidArguments(problems);
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
      return failedResult(error);
    }
  });
  return server;
}
