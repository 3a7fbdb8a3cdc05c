// How eagerly V8 collects the old generation. By default V8 lets it grow to up to four times what was
// live after the last full collection before collecting again, which under load is mostly garbage;
// collecting sooner keeps RSS down at the same throughput (figures in docs/performance.md#memory). Node allows V8
// flags to be set at run time; this one is read at every full collection, so setting it at start-up
// takes effect.
import { setFlagsFromString } from 'node:v8';
import { integer } from './settings.js';

const HEAP_FLAG = '--heap-growing-percent';

/** Sets V8's heap growing percent unless it is 0 (V8's own heuristic) or given on node's command line. */
export function tuneHeap(percent: number, execArgv: readonly string[] = process.execArgv, setFlags = setFlagsFromString): boolean {
  if (percent <= 0 || execArgv.some((arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`))) return false;
  setFlags(`${HEAP_FLAG}=${percent}`);
  return true;
}

/** HEAP_GROWING_PERCENT (figures in docs/performance.md#memory). */
export const HEAP_SETTINGS = {
  heapGrowingPercent: integer('HEAP_GROWING_PERCENT', {
    fallback: 40,
    min: 0,
    max: 1_000,
    unit: 'percent',
    doc: "V8 collects its old generation once it has grown this much over the last live size (0: V8's own choice)",
  }),
};
