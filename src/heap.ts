// How eagerly V8 collects the old generation: by default it may grow to four times what was live, mostly
// garbage under load; collecting sooner keeps RSS down (docs/performance.md#memory). The flag is read at
// every full collection, so setting it at run time takes effect.
import { setFlagsFromString } from 'node:v8';
import { integer } from './settings.js';

const HEAP_FLAG = '--heap-growing-percent';

/** Unless it is 0 (V8's own heuristic) or given on node's command line. */
export function tuneHeap(percent: number, execArgv: readonly string[] = process.execArgv, setFlags = setFlagsFromString): boolean {
  if (percent <= 0 || execArgv.some((arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`))) return false;
  setFlags(`${HEAP_FLAG}=${percent}`);
  return true;
}

export const HEAP_SETTINGS = {
  heapGrowingPercent: integer('HEAP_GROWING_PERCENT', {
    fallback: 40,
    min: 0,
    max: 1_000,
    unit: 'percent',
    doc: "V8 collects its old generation once it has grown this much over the last live size (0: V8's own choice)",
  }),
};
