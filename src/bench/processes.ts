// The sandbox and the gateway as child processes (as deployed: separate processes, real sockets),
// and what Linux tells about a process: CPU time from /proc/<pid>/stat, memory from /proc/<pid>/status.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project root: this file is src/bench/*.ts or dist/bench/*.js, two levels down either way. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ChildServer {
  pid: number;
  /** What the process printed as its address. */
  url: string;
  /** SIGTERM (the servers exit cleanly on it, which also writes a --cpu-prof profile), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export interface SpawnServerOptions {
  /** Script path relative to the project root, e.g. dist/main.js. */
  script: string;
  env: Record<string, string>;
  /** First capture group: the URL the process prints once it listens. */
  ready: RegExp;
  nodeArgs?: readonly string[];
  timeoutMs?: number;
  /** Working directory (where --cpu-prof writes when no --cpu-prof-dir is given). */
  cwd?: string;
}

export async function spawnServer(options: SpawnServerOptions): Promise<ChildServer> {
  const script = fileURLToPath(new URL(options.script, `file://${PROJECT_ROOT}`));
  if (!existsSync(script)) throw new Error(`${options.script} is missing: run "npm run build" first.`);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const onExit = (code: number | null, signal: string | null): void => fail(`exited (${signal ?? code}) before it was ready`);
    const onError = (error: Error): void => fail(error.message);
    const onData = (chunk: string): void => {
      stdout += chunk;
      const match = options.ready.exec(stdout);
      if (!match?.[1]) return;
      settle();
      resolve(match[1]);
    };
    const settle = (): void => {
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError);
      child.stdout?.off('data', onData);
      // Keep draining its output so a full pipe never blocks it.
      child.stdout?.resume();
    };
    const fail = (message: string): void => {
      settle();
      child.kill('SIGKILL');
      reject(new Error(`${options.script}: ${message}${stderr ? `\n${stderr}` : ''}`));
    };
    const timer = setTimeout(() => fail('did not print its address in time'), options.timeoutMs ?? 15_000);
    child.on('exit', onExit).on('error', onError);
    child.stdout?.setEncoding('utf8').on('data', onData);
  });

  return { pid: child.pid as number, url, stop: () => stopChild(child, exited) };
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
