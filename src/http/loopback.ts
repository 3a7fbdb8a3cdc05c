// A GraphQL request the gateway sends itself, over its own port: an MCP tool call meets every step a
// client's request meets, with no second way of executing, for a local kept-alive connection.
import { Pool } from 'undici';
import { GRAPHQL_ENDPOINT } from '../http-headers.js';

/** `body`: null when it sent no JSON. */
export interface LoopbackAnswer {
  status: number;
  body: unknown;
  retryAfterSeconds?: number;
}

export interface Loopback {
  post(body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<LoopbackAnswer>;
  close(): Promise<void>;
}

/** A wildcard address is reached on loopback. */
export function reachedAt(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}

export function createLoopback(url: () => string): Loopback {
  let pool: Pool | undefined;
  return {
    async post(body, headers, signal) {
      pool ??= new Pool(reachedAt(url()));
      const answer = await pool.request({
        path: GRAPHQL_ENDPOINT,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      const text = await answer.body.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // A refusal without a JSON body: its status says it.
      }
      const retryAfter = Number(answer.headers['retry-after']);
      return {
        status: answer.statusCode,
        body: json,
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      };
    },
    close: async () => pool?.close(),
  };
}
