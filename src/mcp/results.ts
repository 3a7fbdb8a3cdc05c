// What a tool call answers: the operation's data as `structuredContent` and the same JSON as text; or,
// for anything that stopped it (a refused key, a rate limit, an upstream failure, a GraphQL error, a
// result over MCP_MAX_RESULT_BYTES), an `isError` result whose text says what happened and what to do,
// as the model reads it. No key is ever part of a result: the gateway's errors never carry one.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A GraphQL error as the gateway answers it. */
export interface OutcomeError {
  message: string;
  extensions?: { code?: unknown; retryAfter?: unknown } & Record<string, unknown>;
}

/** What running an operation answered: the HTTP status, the GraphQL result, a Retry-After if any. */
export interface OperationOutcome {
  status: number;
  result: { data?: Record<string, unknown> | null; errors?: readonly OutcomeError[] };
  retryAfterSeconds?: number;
}

/** What each error code asks of the caller, where the gateway's own message does not say it. */
const NEXT_STEP: Record<string, string> = {
  UNAUTHENTICATED: 'Check the analytics API key the client was configured with.',
  NOT_FOUND: 'list_websites gives the ids of the websites this key can read.',
  BAD_USER_INPUT: 'Change the arguments as the message says and call again.',
  UPSTREAM_UNAVAILABLE: 'The analytics service is failing: try again in a minute.',
  UPSTREAM_TIMEOUT: 'The analytics service was too slow: try a shorter range, or again later.',
};

/** A result that tells the model why nothing came back. */
export const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** The tool result of an operation's outcome, data capped at `maxBytes` of JSON. */
export function toolResult(outcome: OperationOutcome, maxBytes: number): CallToolResult {
  const { result } = outcome;
  const errors = result.errors ?? [];
  if (errors.length > 0) {
    const lines = errors.map((error) => {
      const code = typeof error.extensions?.code === 'string' ? error.extensions.code : 'ERROR';
      const wait = typeof error.extensions?.retryAfter === 'number' ? error.extensions.retryAfter : outcome.retryAfterSeconds;
      const retry = wait === undefined ? '' : ` Retry after ${wait} seconds.`;
      const next = NEXT_STEP[code] === undefined ? '' : ` ${NEXT_STEP[code]}`;
      return `${code}: ${error.message}${retry}${next}`;
    });
    return errorResult([...new Set(lines)].join('\n'));
  }
  if (result.data === undefined || result.data === null) {
    return errorResult(`The gateway answered HTTP ${outcome.status} without data. Try again later.`);
  }
  const text = JSON.stringify(result.data);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) {
    return errorResult(
      `The result is ${bytes} bytes, over this server's maximum of ${maxBytes} (MCP_MAX_RESULT_BYTES): ask for fewer rows (perPage), a later page, a larger interval or a shorter range.`,
    );
  }
  return { structuredContent: result.data, content: [{ type: 'text', text }] };
}

/** The result of a call the gateway could not run at all (it is stopping, its own port refused). */
export function failedResult(error: unknown): CallToolResult {
  const reason = error instanceof Error ? error.message : String(error);
  return errorResult(`The gateway could not run the operation (${reason}). Try again later.`);
}

/** The result of a call whose arguments do not fit the tool's input schema: nothing ran. */
export function invalidArguments(problems: readonly string[]): CallToolResult {
  return errorResult(`Invalid arguments, nothing was run:\n${problems.join('\n')}`);
}
