// A message POSTed to a gateway's /mcp as a plain HTTP client writes it (the SDK's client is in the tests).

/** POSTs `message` (JSON, or a text sent as it is) to `gatewayUrl`/mcp, accepting JSON and event streams. */
export function postToMcp(
  gatewayUrl: string,
  message: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${gatewayUrl}/mcp`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
}
