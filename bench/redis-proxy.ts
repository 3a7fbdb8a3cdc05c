// A TCP proxy in front of a Redis whose faults a benchmark or a test turns on and off: cut, paused, slow.
import { connect, createServer, type Socket } from 'node:net';

export interface RedisProxy {
  /** redis://127.0.0.1:<the proxy's port> */
  url: string;
  /** Each of Redis's answers is handed on this late (0: at once): a slow Redis that still answers. */
  delayMs: number;
  /** Cuts every connection and refuses new ones (closed at once) until `restore`. */
  cut(): void;
  /** Stops forwarding, both ways, on every connection and on new ones, until `restore` hands on what was held. */
  pause(): void;
  /** Ends a cut or a pause. */
  restore(): void;
  close(): Promise<void>;
}

/** A proxy to the Redis on `redisPort`, on an ephemeral port of 127.0.0.1. */
export async function redisProxy(redisPort: number, delayMs = 0): Promise<RedisProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  let paused = false;
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(redisPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      if (paused) socket.pause();
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (proxy.delayMs <= 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), proxy.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const proxy: RedisProxy = {
    url: `redis://127.0.0.1:${port}`,
    delayMs,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    pause() {
      paused = true;
      for (const socket of sockets) socket.pause();
    },
    restore() {
      cut = false;
      paused = false;
      for (const socket of sockets) socket.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
