// How eagerly V8 collects the old generation. By default V8 lets it grow to up to four times what was
// live after the last full collection before collecting again: under load the gateway's live heap is
// 30-50 MB, and its RSS went to 260-290 MB at 100 connections. Collecting at 1.5 times the live size
// keeps it near 140 MB at the same throughput (BENCHMARKS.md). Node allows V8 flags to be set at run
// time; this one is read at every full collection, so setting it at start-up takes effect.
import { setFlagsFromString } from 'node:v8';

const FLAG = '--heap-growing-percent';

/** Sets V8's heap growing percent unless it is 0 (V8's own heuristic) or given on node's command line. */
export function tuneHeap(percent: number, execArgv: readonly string[] = process.execArgv, setFlags = setFlagsFromString): boolean {
  if (percent <= 0 || execArgv.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`))) return false;
  setFlags(`${FLAG}=${percent}`);
  return true;
}
