// What clients that left the line, or were turned away from it, leave behind. Their bodies were read
// before they got in line: the body says whether a request is a subscription, which takes a stream's
// place and never waits in line (operation-type.ts), and a body read before admission keeps a client
// that sends slowly off the slots (server.ts). Once they are gone nothing refers to those bodies, but V8
// frees them only at its next full collection, which comes when something allocates: after a flood of
// clients that joined the line and left, with no traffic, heap and external memory stayed up by the size
// of their bodies (about 200 MB for 3,000 of 60 KB) for as long as nothing came. So once the bodies of
// such clients add up to IDLE_COLLECT_BYTES, the gateway collects as soon as it is idle (nothing at work
// or waiting, checked every IDLE_CHECK_MS), twice (SWEEP_WAIT_MS apart): a collection when idle costs no
// request a wait, and under traffic V8 collects on its own.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bodies of departed or turned-away clients, in bytes, that make the gateway collect once it is idle. */
export const IDLE_COLLECT_BYTES = 8 * 1024 * 1024;

/** How often an idle gateway is looked for, once a collection is owed. */
export const IDLE_CHECK_MS = 1_000;

/** Between the two collections. */
const SWEEP_WAIT_MS = 100;

export interface IdleCollector {
  /** A client left the line, or was turned away from it: its body of `bytes` is garbage from now on. */
  dropped(bytes: number): void;
  stop(): void;
}

/** V8's full collection, as node's --expose-gc gives it (set at run time: it installs `gc` in new contexts). */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

export function createIdleCollector(options: {
  /** Whether requests are at work or waiting: then nothing is collected yet. */
  busy(): boolean;
  /** Called after each collection with the bytes of dropped bodies it was owed. */
  collected(bytes: number): void;
}): IdleCollector {
  let owed = 0;
  let timer: NodeJS.Timeout | undefined;
  let collect: (() => void) | undefined;
  const check = (): void => {
    timer = undefined;
    if (options.busy()) return arm();
    collect ??= fullCollection();
    collect();
    const bytes = owed;
    owed = 0;
    // The buffers the collection found dead are released by V8's sweeper after it: a second collection,
    // a moment later, is what returns the external memory (without it, that waited for the next one).
    setTimeout(() => {
      collect?.();
      options.collected(bytes);
    }, SWEEP_WAIT_MS).unref();
  };
  const arm = (): void => {
    timer = setTimeout(check, IDLE_CHECK_MS);
    timer.unref();
  };
  return {
    dropped(bytes) {
      owed += bytes;
      if (owed >= IDLE_COLLECT_BYTES && timer === undefined) arm();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
