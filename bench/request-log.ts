// What the request log costs per line, as the gateway writes it (`gathered`: each line built from its
// template, src/http/request-log.ts, and gathered into writes of up to 16 KB, src/log.ts) against the same
// gathering with pino building each line (`pino-gathered`: an operation's name bound once in a pino child),
// against a write per line (pino's default destination, the whole line built as an object each time:
// the log before issue 47) and against sonic-boom's own gathering (pino.destination with minLength 4096:
// the gateway's first gathered log, which measures its whole pending text again for each line), pino
// building the lines in both. Each way runs in a child process whose stdout is a pipe this process
// reads and drops, as a log collector's is; the child writes `--lines` request lines, `--burst` per turn
// of the event loop (one: requests answered one at a time; a busy gateway answers several in a turn),
// waits for its writes to end, and reports its own CPU time (user + system, all threads). A way `none` runs the same loop and writes nothing: what the ways cost is their
// CPU less its. Rounds alternate the ways; medians.
// The reader is quick, or (`--reader busy`) busy as a collector or the bench harness under load is: it
// stops reading for 2 ms after every 16 KB, so that the pipe fills now and then.
//
//   npm run build:bench && node dist-bench/bench/request-log.js [--lines 100000] [--rounds 5] [--burst 1] [--reader quick|busy]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Logger, pino } from 'pino';
import { RequestLog } from '../src/http/request-log.js';
import { LOG_FLUSH_MS, LOG_WRITE_SHARED_BYTES, type StdoutLog, stdoutLogger } from '../src/log.js';

export const LOG_WAYS = ['none', 'per-line', 'sonic-boom', 'pino-gathered', 'gathered'] as const;
export type LogWay = (typeof LOG_WAYS)[number];

export interface LogWayResult {
  way: LogWay;
  /** CPU microseconds per line, each round's, and their median. */
  microsPerLine: number[];
  medianMicrosPerLine: number;
  /** Bytes the child wrote per line (read from its stdout). */
  bytesPerLine: number;
}

/** The script each child runs (relative to the project root, as the harness's other scripts: built first). */
const CHILD_SCRIPT = 'dist-bench/bench/request-log.js';
const OPERATIONS = ['Dashboard', 'WebsiteList', 'Website', 'Settings'];

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** The child: writes `lines` request lines the way asked, then reports its CPU time on stderr. */
async function writeLines(way: LogWay, lines: number, burst: number): Promise<void> {
  const perLine = way === 'per-line' ? pino({ level: 'info', base: null }) : undefined;
  const {
    logger,
    stopLog,
    lines: gathered,
  }: StdoutLog = way === 'sonic-boom'
    ? sonicBoomLogger()
    : perLine
      ? { logger: perLine, stopLog: () => undefined }
      : stdoutLogger(way === 'none' ? 'silent' : 'info');
  // The gateway's way: its lines from the template, written where its logger writes.
  const log = new RequestLog(logger, way === 'gathered' ? gathered : undefined);
  const start = process.cpuUsage();
  for (let written = 0; written < lines; ) {
    for (let i = 0; i < burst && written < lines; i++, written++) {
      const operation = OPERATIONS[written % OPERATIONS.length] ?? null;
      const fields = {
        durationMs: 12.34,
        upstreamCalls: 7,
        cost: 7,
        cache: { hits: 0, misses: 7, stale: 0 },
        outcome: 'ok' as const,
      };
      if (perLine) perLine.info({ operation, ...fields }, 'graphql request');
      else if (way !== 'none') log.write(operation, fields);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  stopLog();
  // The last writes end on their own (sonic-boom's are asynchronous with the gathered way).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const used = process.cpuUsage(start);
  process.stderr.write(`${JSON.stringify({ micros: used.user + used.system })}\n`);
}

/** The gateway's first gathered log: sonic-boom gathering lines itself (minLength), flushed as the gateway's is. */
function sonicBoomLogger(): { logger: Logger; stopLog: () => void } {
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_WRITE_SHARED_BYTES });
  const flushing = setInterval(() => destination.flush(), LOG_FLUSH_MS);
  return {
    logger: pino({ level: 'info', base: null }, destination),
    stopLog: () => {
      clearInterval(flushing);
      destination.flush();
    },
  };
}

export type LogReader = 'quick' | 'busy';

/** One run of a way in a child: its CPU µs per line and the bytes it wrote. */
function runChild(way: LogWay, lines: number, burst: number, reader: LogReader): Promise<{ microsPerLine: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD_SCRIPT, '--child', way, '--lines', String(lines), '--burst', String(burst)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let bytes = 0;
    let sincePause = 0;
    let report = '';
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      sincePause += chunk.length;
      if (reader === 'busy' && sincePause >= 16 * 1024) {
        sincePause = 0;
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), 2);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      report += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const micros = (JSON.parse(report.trim().split('\n').at(-1) ?? '{}') as { micros?: number }).micros;
      if (code !== 0 || micros === undefined) reject(new Error(`request-log child (${way}) failed: ${code} ${report}`));
      else resolve({ microsPerLine: micros / lines, bytes });
    });
  });
}

/** Each way `rounds` times, alternating, `lines` lines a run. */
export async function measureRequestLog({
  lines,
  rounds,
  burst = 1,
  reader = 'quick',
}: {
  lines: number;
  rounds: number;
  /** Lines written in one turn of the event loop. */
  burst?: number;
  reader?: LogReader;
}): Promise<LogWayResult[]> {
  const runs = new Map<LogWay, { micros: number[]; bytes: number }>(LOG_WAYS.map((way) => [way, { micros: [], bytes: 0 }]));
  for (let round = 0; round < rounds; round++) {
    for (const way of LOG_WAYS) {
      const run = await runChild(way, lines, burst, reader);
      const entry = runs.get(way);
      entry?.micros.push(run.microsPerLine);
      if (entry) entry.bytes = run.bytes;
    }
  }
  return LOG_WAYS.map((way) => {
    const { micros, bytes } = runs.get(way) ?? { micros: [], bytes: 0 };
    return { way, microsPerLine: micros, medianMicrosPerLine: median(micros), bytesPerLine: bytes / lines };
  });
}

export function formatRequestLog(results: readonly LogWayResult[], lines: number, reader: LogReader, burst = 1): string {
  const none = results.find((result) => result.way === 'none')?.medianMicrosPerLine ?? 0;
  const net = (result: LogWayResult | undefined): number => (result ? result.medianMicrosPerLine - none : Number.NaN);
  const rows = results.map(
    (result) =>
      `| ${result.way} | ${result.medianMicrosPerLine.toFixed(2)} | ${result.way === 'none' ? '–' : net(result).toFixed(2)} | ${result.microsPerLine.map((value) => value.toFixed(2)).join(', ')} | ${result.bytesPerLine.toFixed(0)} |`,
  );
  const perLine = results.find((result) => result.way === 'per-line');
  const gathered = results.find((result) => result.way === 'gathered');
  const sonicBoom = results.find((result) => result.way === 'sonic-boom');
  const pinoGathered = results.find((result) => result.way === 'pino-gathered');
  return [
    `## The request log: CPU per line (${lines} lines a run, ${burst} a turn, stdout a pipe, its reader ${reader})`,
    '',
    '| way | CPU µs/line (median) | less the loop (none) | each run | bytes/line |',
    '|---|---:|---:|---|---:|',
    ...rows,
    '',
    `Gathered ÷ per line, the loop's own CPU left out: ${(net(gathered) / net(perLine)).toFixed(2)}; gathered ÷ sonic-boom's gathering: ${(net(gathered) / net(sonicBoom)).toFixed(2)}; gathered ÷ pino-gathered (the template against pino building the line): ${(net(gathered) / net(pinoGathered)).toFixed(2)}.`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      lines: { type: 'string', default: '100000' },
      rounds: { type: 'string', default: '5' },
      burst: { type: 'string', default: '1' },
      reader: { type: 'string', default: 'quick' },
    },
  });
  const reader: LogReader = values.reader === 'busy' ? 'busy' : 'quick';
  const lines = Number(values.lines);
  const burst = Math.max(1, Number(values.burst));
  if (values.child !== undefined) {
    await writeLines(values.child as LogWay, lines, burst);
  } else {
    const results = await measureRequestLog({ lines, rounds: Number(values.rounds), burst, reader });
    console.log(formatRequestLog(results, lines, reader, burst));
  }
}
