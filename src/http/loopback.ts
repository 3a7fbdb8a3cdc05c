// A GraphQL request sent by the gateway to itself, over its own port: what an MCP tool call runs, so that
// it meets every step a client's request meets (admission and fairness, the stored answers, the known
// operations, yoga and its plugins, the log line) with no second way of executing. Loopback costs a
// local connection, kept alive between calls.
import { Pool } from 'undici';
import { GRAPHQL_ENDPOINT } from '../http-headers.js';

/** What the gateway answered: its status, its JSON body (null when it sent none), its Retry-After. */
export interface LoopbackAnswer {
  status: number;
  body: unknown;
  retryAfterSeconds?: number;
}

export interface Loopback {
  /** POSTs `body` to /graphql with `headers`. */
  post(body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<LoopbackAnswer>;
  close(): Promise<void>;
}

/** Where a server listening on `url` is reached from its own machine: a wildcard address on loopback. */
export function reachedAt(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}

/** A client of the gateway at `url()` (known once it listens). */
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
    close: async () => {
      await pool?.close();
    },
  };
}
