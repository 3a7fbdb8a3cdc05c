// A real redis-server for the suites that test the Redis store: started on an ephemeral port of
// 127.0.0.1, with no persistence, and stopped when the file ends. CI installs Debian's redis-server
// (.ci/run). Without one on PATH, suites written with this file's `describe` are skipped outside CI
// (the run says so: test/suite-skip.ts) and fail at once in CI, saying what is missing.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe as describeAlways } from 'vitest';
import { freePort } from './ports.js';
import { REDIS_INSTALL, inCi, redisServerMissing, skipRedisSuite } from './suite-skip.js';

/** vitest's `describe`, skipped on a machine without redis-server outside CI (all of a file's, so its hooks do not run either). */
export const describe = describeAlways.skipIf(skipRedisSuite);

export interface RedisServer {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** SIGKILL: Redis dies as in a crash (no goodbye to its clients); resolves once it has exited. */
  kill(): Promise<void>;
  /** Stops it (SIGTERM, SIGKILL after 2 s); idempotent. */
  close(): Promise<void>;
}

export interface StartRedisOptions {
  /** Default: a free ephemeral port. A given port is not retried (restarting Redis where it was). */
  port?: number;
  /** Extra arguments of redis-server, e.g. ['--maxmemory', '1mb']. */
  args?: string[];
  /** A configuration file, read first (a sentinel's: redis-server rewrites it; args then take ['--sentinel']). */
  configFile?: string;
  /** The server's password, when args or the file set `requirepass`: the check that it answers authenticates with it. */
  password?: string;
}

const START_TIMEOUT_MS = 10_000;
const running = new Set<ChildProcess>();
// A worker that ends without its afterAll (a crash) must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The process id of the Redis answering PING on the port (raw RESP: PING, then INFO server), or null
 * when nothing answers yet. The id tells our redis-server from another one that took the port.
 */
function answeringPid(port: number, password?: string): Promise<number | null> {
  // With a password, AUTH first: its +OK comes before the PONG.
  const auth = password === undefined ? '' : `AUTH ${JSON.stringify(password)}\r\n`;
  const ok = password === undefined ? '' : '+OK\r\n';
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (pid: number | null): void => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(500, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write(`${auth}PING\r\nINFO server\r\n`));
    const pong = `${ok}+PONG\r\n`;
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!answer.startsWith(pong)) {
        if (answer.length >= pong.length || (answer.includes('\r\n') && !pong.startsWith(answer))) done(null); // an error (e.g. -LOADING) or not Redis
        return;
      }
      const info = /^\$(\d+)\r\n/.exec(answer.slice(pong.length));
      if (info === null) return;
      const body = answer.slice(pong.length + info[0].length);
      if (Buffer.byteLength(body, 'latin1') < Number(info[1])) return;
      const pid = /process_id:(\d+)/.exec(body);
      done(pid ? Number(pid[1]) : null);
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

class NotStarted extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

async function startOn(port: number, args: string[], configFile?: string, password?: string): Promise<RedisServer> {
  const child = spawn(
    'redis-server',
    [
      ...(configFile ? [configFile] : []),
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
      // A file of its own: a dump.rdb left in the temporary folder (a replica's sync writes one) is never loaded.
      ...['--dbfilename', `agw-test-${process.pid}-${port}.rdb`],
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  running.add(child);
  child.once('exit', () => running.delete(child));

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const failed = await Promise.race([spawnError, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 25))]);
    if (failed !== undefined) {
      const missing = (failed as NodeJS.ErrnoException).code === 'ENOENT';
      throw new NotStarted(
        missing
          ? `redis-server is not on PATH: the Redis suite needs a real Redis (Debian: ${REDIS_INSTALL}; .ci/run installs it)`
          : `redis-server could not be started: ${failed.message}`,
        false,
      );
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new NotStarted(
        `redis-server exited (${child.exitCode ?? child.signalCode}) on port ${port}:\n${output}`,
        /address already in use/i.test(output),
      );
    }
    const pid = await answeringPid(port, password);
    if (pid === child.pid) break;
    if (pid !== null) {
      child.kill('SIGKILL');
      await exited(child);
      throw new NotStarted(`another Redis (pid ${pid}) answers on port ${port}`, true);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited(child);
      throw new NotStarted(`redis-server did not answer PING on port ${port} within ${START_TIMEOUT_MS} ms:\n${output}`, false);
    }
  }

  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = exited(child);
    child.kill(signal);
    const forced = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await gone;
    clearTimeout(forced);
  };
  return { url: `redis://127.0.0.1:${port}`, port, kill: () => stop('SIGKILL'), close: () => stop('SIGTERM') };
}

/** Starts redis-server; on an ephemeral port, tried again once on another port if the first was taken meanwhile. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const args = options.args ?? [];
  const { configFile, password } = options;
  if (options.port !== undefined) return startOn(options.port, args, configFile, password);
  try {
    return await startOn(await freePort(), args, configFile, password);
  } catch (error) {
    if (!(error instanceof NotStarted) || !error.portTaken) throw error;
    // another process took the port between the probe and redis-server
    return startOn(await freePort(), args, configFile, password);
  }
}

/** One Redis for the whole file: started before its tests, stopped after them. */
export function useRedis(options: StartRedisOptions = {}): RedisServer {
  // In CI only (elsewhere the suite is skipped and its hooks never run): the file fails as it
  // loads, with this error alone, rather than its hooks failing one after the other.
  if (redisServerMissing && inCi) {
    throw new Error(`redis-server is not on PATH, and CI is set: the Redis suite must run here (install it: ${REDIS_INSTALL}).`);
  }
  let started: RedisServer | undefined;
  beforeAll(async () => {
    started = await startRedis(options);
  });
  afterAll(() => started?.close());
  const current = (): RedisServer => {
    if (started === undefined) throw new Error('useRedis(): Redis is started in beforeAll; use it inside tests and hooks');
    return started;
  };
  return {
    get url() {
      return current().url;
    },
    get port() {
      return current().port;
    },
    kill: () => current().kill(),
    close: () => current().close(),
  };
}

/** A TCP proxy in front of a Redis, whose faults a test turns on and off (the benchmark's). */
export { redisProxy, type RedisProxy } from '../bench/redis-proxy.js';
