// The processes a benchmark harness left behind: every pass starts its sandbox, gateways, floor, static
// server or redis-server as children of the test's process, and must have ended them all when it returns.
import { readdirSync, readFileSync } from 'node:fs';

/** This process's live children (pid and command line), read from /proc; [] where there is no /proc. */
export function childProcesses(): string[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const children: string[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state, then the parent's pid.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      children.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`);
    } catch {
      // It ended while being read.
    }
  }
  return children;
}
