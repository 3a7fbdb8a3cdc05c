// What the bench's yardsticks (floor-gateway.ts, aggregator.ts) share: their one undici Pool to the
// REST API of UPSTREAM_URL, a GET with the caller's key whose JSON body is parsed, and the mapping of a
// website's privacy as the gateway answers it.
import type { Server } from 'node:http';
import { Pool } from 'undici';

/** The upstream's privacy values as the gateway's Privacy enum names them. */
export const PRIVACY: Record<string, string> = { '0': 'PUBLIC', '1': 'PRIVATE', '2': 'PASSWORD', null: 'PUBLIC' };

export interface YardstickUpstream {
  origin: string;
  /** GET of a path below /api/v1 with its query string; resolves to the parsed body, rejects on a non-200. */
  get(path: string, authorization: string): Promise<unknown>;
  close(): Promise<void>;
}

/** The pool of UPSTREAM_CONNECTIONS sockets (128, the gateway's default) to `upstreamUrl`. */
export function yardstickUpstream(upstreamUrl: string): YardstickUpstream {
  const upstream = new URL(upstreamUrl);
  const origin = upstream.origin;
  const apiPrefix = `${upstream.pathname.replace(/\/+$/, '')}/api/v1`;
  const pool = new Pool(origin, { connections: Number(process.env.UPSTREAM_CONNECTIONS ?? 128) || 128 });
  return {
    origin,
    async get(path, authorization) {
      const { statusCode, body } = await pool.request({
        origin,
        path: apiPrefix + path,
        method: 'GET',
        headers: { accept: 'application/json', authorization },
      });
      if (statusCode !== 200) {
        await body.dump();
        throw new Error(`upstream answered ${statusCode} to GET ${path}`);
      }
      return body.json();
    },
    close: () => pool.close(),
  };
}

/** On SIGTERM or SIGINT: the server closed, its connections cut, the pool closed, the process ended. */
export function stopOnSignal(server: Server, upstream: YardstickUpstream): void {
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void upstream.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
