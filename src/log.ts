// The gateway's log: pino to stdout, without a write per line. A write to a pipe or a file costs more
// than the line it carries, so lines are gathered into writes of LOG_WRITE_MIN_BYTES, written without
// waiting; whatever waits is written every LOG_FLUSH_MS, and what is left at exit (pino's destination
// flushes it then). `bench/request-log.ts` measures it against a write per line.
import { type Logger, pino } from 'pino';

/** Bytes gathered before a write to stdout (about sixteen request lines). */
export const LOG_WRITE_MIN_BYTES = 4096;
/** The longest a line waits for others before it is written anyway. */
export const LOG_FLUSH_MS = 250;

/** The gateway's logger at `level` on file descriptor `fd` (stdout), and what stops its flushing. */
export function stdoutLogger(level: string, fd = 1): { logger: Logger; stopLog: () => void } {
  if (level === 'silent') return { logger: pino({ level, base: null }), stopLog: () => undefined };
  const destination = pino.destination({ dest: fd, sync: false, minLength: LOG_WRITE_MIN_BYTES });
  const flushing = setInterval(() => destination.flush(), LOG_FLUSH_MS);
  flushing.unref();
  return {
    logger: pino({ level, base: null }, destination),
    stopLog: () => {
      clearInterval(flushing);
      destination.flush();
    },
  };
}
