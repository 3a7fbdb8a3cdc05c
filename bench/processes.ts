// The sandbox and the gateway as child processes (as deployed: separate processes, real sockets),
// and what Linux tells about a process: CPU time from /proc/<pid>/stat, memory from /proc/<pid>/status.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import { WebSocket } from 'undici';

/**
 * The project root: the nearest folder above this file with a package.json. This file runs as
 * bench/*.ts (vitest) and as dist-bench/bench/*.js (npm run bench), one and two levels down.
 */
export const PROJECT_ROOT = projectRoot(fileURLToPath(new URL('.', import.meta.url)));

function projectRoot(from: string): string {
  for (let folder = from; ; folder = dirname(folder)) {
    // With its trailing slash, as `new URL(script, root)` needs.
    if (existsSync(join(folder, 'package.json'))) return join(folder, '/');
    if (dirname(folder) === folder) throw new Error(`no package.json above ${from}`);
  }
}

export interface ChildServer {
  pid: number;
  /** What the process printed as its address. */
  url: string;
  /**
   * Bytes it has written to its stdout since it printed its address (the gateway's request log goes
   * there): read and dropped by the harness, only counted.
   */
  outputBytes(): number;
  /**
   * Lines it has written to its stdout since it printed its address, for a process that writes one per
   * request (a gateway with its request log on: SpawnServerOptions.linePerRequest); undefined otherwise.
   */
  requestLines?: () => number;
  /**
   * Counts `marker` in what it writes to its stdout from now on, until `stop` (read as bytes: nothing is
   * decoded, and nothing is looked at once stopped).
   */
  watchOutput(marker: string): { count(): number; stop(): void };
  /** SIGTERM (the servers exit cleanly on it, which also writes a --cpu-prof profile), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export interface SpawnServerOptions {
  /** Script path relative to the project root, e.g. dist/main.js, or absolute. */
  script: string;
  /** Arguments after the script. */
  args?: readonly string[];
  env: Record<string, string>;
  /** First capture group: the URL the process prints once it listens. */
  ready: RegExp;
  nodeArgs?: readonly string[];
  /** The node binary that runs it; default this process's (process.execPath). */
  node?: string;
  timeoutMs?: number;
  /** Working directory (where --cpu-prof writes when no --cpu-prof-dir is given). */
  cwd?: string;
  /** It writes a line to its stdout per request (a gateway's request log): ChildServer.requestLines counts them. */
  linePerRequest?: boolean;
}

export async function spawnServer(options: SpawnServerOptions): Promise<ChildServer> {
  const script = fileURLToPath(new URL(options.script, `file://${PROJECT_ROOT}`));
  if (!existsSync(script)) throw new Error(`${options.script} is missing: run "npm run build" first.`);
  const child = spawn(options.node ?? process.execPath, [...(options.nodeArgs ?? []), script, ...(options.args ?? [])], {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let outputBytes = 0;
  let outputLines = 0;

  const url = await new Promise<string>((resolve, reject) => {
    // Decoded only until the address shows; after it, the output is counted, never decoded.
    const decoder = new StringDecoder('utf8');
    let stdout = '';
    const onExit = (code: number | null, signal: string | null): void => fail(`exited (${signal ?? code}) before it was ready`);
    const onError = (error: Error): void => fail(error.message);
    const onData = (chunk: Buffer): void => {
      stdout += decoder.write(chunk);
      const match = options.ready.exec(stdout);
      if (!match?.[1]) return;
      settle();
      resolve(match[1]);
    };
    const settle = (): void => {
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError);
      child.stdout?.off('data', onData);
      // Keep draining its output (the request log, one line per request) so a full pipe never blocks it.
      child.stdout?.on('data', (chunk: Buffer) => {
        outputBytes += chunk.length;
        if (options.linePerRequest) for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) outputLines++;
      });
    };
    const fail = (message: string): void => {
      settle();
      child.kill('SIGKILL');
      reject(new Error(`${options.script}: ${message}${stderr ? `\n${stderr}` : ''}`));
    };
    const timer = setTimeout(() => fail('did not print its address in time'), options.timeoutMs ?? 15_000);
    child.on('exit', onExit).on('error', onError);
    child.stdout?.on('data', onData);
  });

  return {
    pid: child.pid as number,
    url,
    outputBytes: () => outputBytes,
    ...(options.linePerRequest ? { requestLines: () => outputLines } : {}),
    watchOutput: (marker) => watchStream(child.stdout, marker),
    stop: () => stopChild(child, exited),
  };
}

/** Counts `marker` in what `stream` gives from now on, until `stop`; a marker cut across two chunks counts. */
function watchStream(stream: Readable | null, marker: string): { count(): number; stop(): void } {
  const wanted = Buffer.from(marker);
  let count = 0;
  // The end of the last chunk, where a marker cut in two begins: shorter than a marker, so it holds none
  // whole and none is counted twice.
  let tail = Buffer.alloc(0);
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const text = tail.length === 0 ? bytes : Buffer.concat([tail, bytes]);
    for (let at = text.indexOf(wanted); at !== -1; at = text.indexOf(wanted, at + wanted.length)) count++;
    tail = Buffer.from(text.subarray(Math.max(0, text.length - wanted.length + 1)));
  };
  stream?.on('data', onData);
  return { count: () => count, stop: () => void stream?.off('data', onData) };
}

/** A TCP port free on 127.0.0.1 right now (for a program that cannot pick its own, like redis-server). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServer extends ChildServer {
  port: number;
  /** What it printed as its version, e.g. "7.0.15"; null if it printed none. */
  version: string | null;
}

export interface RedisClusterServers {
  /** redis-cluster://127.0.0.1:<port>,… (every node a seed) */
  url: string;
  nodes: RedisServer[];
  version: string | null;
  /** The ports of the nodes that are masters now. */
  masters(): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * A throw-away Redis Cluster of three masters and three replicas (`redis-server --cluster-enabled yes`
 * six times, in memory only, and `redis-cli --cluster create … --cluster-replicas 1`), ready when every
 * node says `cluster_state:ok`.
 */
export async function spawnRedisCluster(program = 'redis-server', cli = 'redis-cli', timeoutMs = 30_000): Promise<RedisClusterServers> {
  const nodes: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.splice(0).map((node) => node.stop()));
  };
  try {
    // The bus on a free port of its own: by default it is the node's port + 10,000, which a port above
    // 55,535 (a third of the ephemeral range) cannot have, and another server may hold.
    const started = await Promise.all(
      Array.from({ length: 6 }, async () =>
        spawnRedis(program, 10_000, [
          ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
          ...['--cluster-port', String(await freePort())],
        ]),
      ),
    );
    nodes.push(...started);
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    execFileSync(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
      stdio: 'pipe',
      timeout: timeoutMs,
    });
    const until = Date.now() + timeoutMs;
    for (const node of nodes) {
      while (!/cluster_state:ok/.test(String(await onNode(node.port, (admin) => admin.call('CLUSTER', 'INFO'))))) {
        if (Date.now() > until) throw new Error(`the cluster's node on ${node.port} is not in state ok after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `redis-cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`,
    nodes,
    version: nodes[0]?.version ?? null,
    masters: async () => {
      const roles = await Promise.all(
        nodes.map((node) => onNode(node.port, async (admin) => ((await admin.call('ROLE')) as [string])[0] === 'master')),
      );
      return nodes.filter((_, i) => roles[i]).map((node) => node.port);
    },
    stop,
  };
}

/**
 * A short-lived admin connection to the Redis at 127.0.0.1:`port`, made and closed around `use`: it does
 * not retry (a node that is gone fails at once).
 */
export async function onNode<T>(port: number, use: (admin: Redis) => Promise<T>): Promise<T> {
  const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await admin.connect();
    return await use(admin);
  } finally {
    admin.disconnect();
  }
}

/**
 * A throw-away redis-server on a free port of 127.0.0.1, in memory only (no RDB, no AOF, a temporary
 * working directory removed on stop). `url` is its redis:// URL.
 */
export async function spawnRedis(program = 'redis-server', timeoutMs = 10_000, extraArgs: readonly string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--logfile',
    '',
    ...extraArgs,
  ];
  const child = spawn(program, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  let outputBytes = 0;
  try {
    const version = await new Promise<string | null>((resolve, reject) => {
      const done = (error: Error | null, value: string | null = null): void => {
        clearTimeout(timer);
        child.off('exit', onExit).off('error', onError);
        child.stdout?.off('data', onData);
        child.stdout?.on('data', (chunk: string) => {
          outputBytes += Buffer.byteLength(chunk);
        });
        child.stderr?.resume();
        if (error) reject(error);
        else resolve(value);
      };
      const onExit = (code: number | null): void =>
        done(new Error(`${program} exited (${code}) before it was ready:\n${output.slice(-2000)}`));
      const onError = (error: Error): void => done(new Error(`${program} could not start: ${error.message}`));
      const onData = (chunk: string): void => {
        output += chunk;
        if (/Ready to accept connections/.test(output)) done(null, /version=([\d.]+)/i.exec(output)?.[1] ?? null);
      };
      const timer = setTimeout(() => done(new Error(`${program} did not say it was ready in time:\n${output.slice(-2000)}`)), timeoutMs);
      child.on('exit', onExit).on('error', onError);
      child.stdout?.setEncoding('utf8').on('data', onData);
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    });
    return {
      pid: child.pid as number,
      url: `redis://127.0.0.1:${port}`,
      port,
      version,
      outputBytes: () => outputBytes,
      watchOutput: (marker) => watchStream(child.stdout, marker),
      stop: async () => {
        await stopChild(child, exited);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Waits until check() holds, looking every stepMs; false after timeoutMs. */
export async function until(check: () => boolean, timeoutMs: number, stepMs = 10): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) return false;
    await sleep(stepMs);
  }
  return true;
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

let clockTicks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, nearly always 100). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU time of a process so far, in ms; null where there is no /proc. */
export function cpuTimeMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), starting at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? ((utime + stime) * 1000) / ticksPerSecond() : null;
  } catch {
    return null;
  }
}

/** A `Vm*:` figure of /proc/<pid>/status in MB (VmRSS: now; VmHWM: the peak so far); null where there is no /proc. */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match?.[1] ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples VmRSS every `everyMs` until stopped; returns the largest seen (a sampled peak). */
export function sampleRss(pid: number, everyMs = 50): { stop(): number | null } {
  let peak: number | null = memoryMb(pid, 'VmRSS');
  const timer = setInterval(() => {
    const now = memoryMb(pid, 'VmRSS');
    if (now !== null && (peak === null || now > peak)) peak = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const now = memoryMb(pid, 'VmRSS');
      return now !== null && (peak === null || now > peak) ? now : peak;
    },
  };
}

/** Calls to the inspector (Chrome DevTools Protocol) of a process started with --inspect=127.0.0.1:<port>. */
export async function inspect(port: number, calls: readonly { method: string; params?: Record<string, unknown> }[]): Promise<unknown[]> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(5_000) })).json()) as {
    webSocketDebuggerUrl?: string;
  }[];
  const address = targets[0]?.webSocketDebuggerUrl;
  if (!address) throw new Error('the inspector lists no target');
  const socket = new WebSocket(address);
  const waiting = new Map<number, (message: { result?: unknown; error?: { message?: string } }) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message?: string } };
    if (message.id !== undefined) waiting.get(message.id)?.(message);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the inspector did not answer in time')), 5_000);
      socket.addEventListener('open', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.addEventListener('error', () => {
        clearTimeout(timer);
        reject(new Error('the inspector refused the connection'));
      });
    });
    const results: unknown[] = [];
    for (const [index, call] of calls.entries()) {
      const id = index + 1;
      const answer = await new Promise<{ result?: unknown; error?: { message?: string } }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${call.method}: no answer in time`)), 20_000);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        socket.send(JSON.stringify({ id, method: call.method, params: call.params ?? {} }));
      });
      if (answer.error) throw new Error(`${call.method}: ${answer.error.message ?? 'failed'}`);
      results.push(answer.result);
    }
    return results;
  } finally {
    socket.close();
  }
}
