// What a tool call answers: the data as `structuredContent` and the same JSON as text; or, for anything
// that stopped it, an `isError` result whose text tells the model what happened and what to do.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface OutcomeError {
  message: string;
  extensions?: { code?: unknown; retryAfter?: unknown } & Record<string, unknown>;
}

export interface OperationOutcome {
  status: number;
  result: { data?: Record<string, unknown> | null; errors?: readonly OutcomeError[] };
  retryAfterSeconds?: number;
}

/** What each error code asks of the caller, where the gateway's message does not say it. */
const NEXT_STEP: Record<string, string> = {
  UNAUTHENTICATED: 'Check the analytics API key the client was configured with.',
  NOT_FOUND: 'list_websites gives the ids of the websites this key can read.',
  BAD_USER_INPUT: 'Change the arguments as the message says and call again.',
  UPSTREAM_UNAVAILABLE: 'The analytics service is failing: try again in a minute.',
  UPSTREAM_TIMEOUT: 'The analytics service was too slow: try a shorter range, or again later.',
};

export const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

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
