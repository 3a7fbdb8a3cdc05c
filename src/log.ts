// The gateway's log: pino to stdout, without a write per line. A write to a pipe or a file costs more
// than the line it carries, so lines are gathered into writes of up to LOG_WRITE_ALONE_BYTES; whatever
// waits is written every LOG_FLUSH_MS, and what is left when the process exits. `bench/request-log.ts`
// measures it against a write per line and against sonic-boom's own gathering.
// A cluster worker (WORKERS) writes at most PIPE_BUF (4096 bytes on Linux), the most a pipe takes in one
// piece: every worker writes to the primary's stdout, and a larger write to a full pipe is taken in parts
// that another worker's write can come between, cutting lines in two. Only a line longer than that on its
// own is written alone in a larger write, as it would be without gathering. A process alone on its stdout
// writes larger pieces: each write to a pipe wakes its reader, so fewer writes cost less a request
// (docs/performance.md#the-request-log).
//
// The lines are gathered here, in an array joined once per write, not by pino's destination (sonic-boom's
// `minLength`): sonic-boom appends each line to the text it holds and measures that text's bytes again
// (Buffer.byteLength), which copies all of it into a flat string, line after line; while a write is on its
// way (a pipe whose reader is slow) that text grows to a whole write, so each line cost copies of all the
// lines before it and kept them alive through young collections.
// Each gathered write is synchronous, as pino's default destination and node's own stdout on a pipe are:
// nothing is on its way in a thread when the process exits (an asynchronous write still in libuv's
// thread pool at process.exit was lost, lines and all), and a reader that stops reading holds the
// gateway once the pipe is full instead of the lines piling up in memory. sonic-boom does the writing
// (EAGAIN retried).
import cluster from 'node:cluster';
import { type DestinationStream, type Logger, pino } from 'pino';

/** The most bytes of a write to a stdout that other processes write to (PIPE_BUF: a pipe takes it in one piece). */
export const LOG_WRITE_SHARED_BYTES = 4096;
/** The most bytes of a write of a process alone on its stdout. */
export const LOG_WRITE_ALONE_BYTES = 16 * 1024;

/** The most bytes of a write to stdout: a cluster worker shares its stdout with the other workers. */
export const logWriteBytes = (clusterWorker: boolean): number => (clusterWorker ? LOG_WRITE_SHARED_BYTES : LOG_WRITE_ALONE_BYTES);
/** The longest a line waits for others before it is written anyway. */
export const LOG_FLUSH_MS = 250;

/** pino's destination (sonic-boom). */
type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * A pino destination that gathers lines and hands them to `out` joined, at most `maxBytes` at a time
 * (more only for a single line longer than that).
 */
export class GatheredLines implements DestinationStream {
  private lines: string[] = [];
  private pending = 0;

  constructor(
    private readonly out: SonicBoom,
    readonly maxBytes = LOG_WRITE_SHARED_BYTES,
  ) {}

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.pending > 0 && this.pending + bytes > this.maxBytes) this.flush();
    this.lines.push(line);
    this.pending += bytes;
    if (this.pending >= this.maxBytes) this.flush();
  }

  /** Writes what is gathered; `done` (pino's logger.flush) once it is written. */
  flush(done?: (error?: Error) => void): void {
    if (this.lines.length > 0) {
      const text = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
      this.lines = [];
      this.pending = 0;
      this.out.write(text);
    }
    if (done) this.out.flush(done);
  }

  /** Writes what is gathered and what the destination holds, before returning (at exit). */
  flushSync(): void {
    this.flush();
    this.out.flushSync();
  }
}

/** The logs whose lines may still be gathered: written when the process exits (one listener for all). */
const gathering = new Set<GatheredLines>();
let exitHeard = false;

/** Lines still gathered when the process exits (a fatal error, process.exit) are written then. */
function writeAtExit(lines: GatheredLines): void {
  gathering.add(lines);
  if (exitHeard) return;
  exitHeard = true;
  process.once('exit', () => {
    for (const each of gathering) {
      try {
        each.flushSync();
      } catch {
        // stdout is gone (closed, a broken pipe): there is nowhere to write them.
      }
    }
  });
}

/** The gateway's logger, what stops its flushing, and where it writes (none when silent). */
export interface StdoutLog {
  logger: Logger;
  stopLog: () => void;
  /** Where the logger writes its lines: pino's defaults, no base bindings (the request log's template writes here). */
  lines?: GatheredLines;
}

/** The gateway's logger at `level` on file descriptor `fd` (stdout), and what stops its flushing. */
export function stdoutLogger(level: string, fd = 1): StdoutLog {
  if (level === 'silent') return { logger: pino({ level, base: null }), stopLog: () => undefined };
  const lines = new GatheredLines(pino.destination({ dest: fd, sync: true }), logWriteBytes(cluster.isWorker));
  const flushing = setInterval(() => lines.flush(), LOG_FLUSH_MS);
  flushing.unref();
  writeAtExit(lines);
  return {
    logger: pino({ level, base: null }, lines),
    stopLog: () => {
      clearInterval(flushing);
      gathering.delete(lines);
      lines.flush();
    },
    lines,
  };
}
