// Timers for the live hub's tests (its `setTimer` option): they run only when the test says.

/** Timers that run only when the test says, recording the delay each was set for. */
export function manualTimers() {
  const pending: { run: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    delays: () => pending.map((timer) => timer.ms),
    setTimer: (run: () => void, ms: number) => {
      const timer = { run, ms, cancelled: false };
      pending.push(timer);
      return { cancel: () => void (timer.cancelled = true) };
    },
    /** Runs every timer set and not cancelled so far. */
    fire: () => {
      for (const timer of pending.splice(0)) if (!timer.cancelled) timer.run();
    },
    live: () => pending.filter((timer) => !timer.cancelled).length,
  };
}
