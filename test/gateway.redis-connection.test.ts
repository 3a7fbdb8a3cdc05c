// The log says when the store is lost and when it is back, once each, even with no store operation in
// flight (store operations are skipped while the connection is lost, so none would say it): a gateway
// on a real redis-server that is killed, its port then closing every connection the gateway makes, and
// a redis-server started again on it; no request meanwhile.
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { type Stack, startStack, until } from './fixture.js';
import { type RedisServer, describe, startRedis } from './redis.js';

interface LogLine {
  level: number;
  msg: string;
  store?: string;
}

let stack: Stack | undefined;
const servers: RedisServer[] = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const LOST = 'Redis lost: reading from the upstream until it is back';
const BACK = 'Redis back: the store is used again';

describe('a gateway whose Redis dies and comes back', () => {
  it('logs once that the store is lost and once that it is back, with no request meanwhile', async () => {
    const redis = await startRedis();
    servers.push(redis);
    const lines: LogLine[] = [];
    const logger = pino(
      { level: 'info', base: null, timestamp: false },
      { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    );
    stack = await startStack({ env: { REDIS_URL: redis.url, CACHE: 'on' }, gateway: { logger } });
    const ready = async (): Promise<string> => ((await (await fetch(`${stack?.gateway.url}/ready`)).json()) as { store: string }).store;
    await until('the store to be ready', async () => (await ready()) === 'redis ready');
    const said = (msg: string): LogLine[] => lines.filter((line) => line.msg === msg);
    expect(said(LOST)).toEqual([]);

    await redis.kill();
    await until('the line saying the store is lost', () => said(LOST).length > 0);
    // Attempts to reconnect fail one after another meanwhile, each connection closed as soon as it is
    // made: the line is not said again.
    let attempts = 0;
    const closing = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => closing.listen(redis.port, '127.0.0.1', resolve));
    await until('three attempts to reconnect', () => attempts >= 3);
    await new Promise<void>((resolve, reject) => closing.close((error) => (error ? reject(error) : resolve())));
    expect(said(LOST)).toHaveLength(1);
    expect(said(BACK)).toEqual([]);

    servers.push(await startRedis({ port: redis.port }));
    await until('the line saying the store is back', () => said(BACK).length > 0);
    expect(await ready()).toBe('redis ready');
    expect(said(LOST)).toEqual([{ level: 40, msg: LOST, store: expect.stringMatching(/^(close|reconnecting)/) }]);
    expect(said(BACK)).toEqual([{ level: 30, msg: BACK, store: 'ready' }]);
    // Closed by the gateway as it stops: not a store lost.
    await stack.close();
    stack = undefined;
    expect(said(LOST)).toHaveLength(1);
  });
});
