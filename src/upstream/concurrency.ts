// At most `max` upstream calls of one GraphQL request in flight; the others wait their turn, in order.
// Not p-limit: its promise hops and queue object per call show on every request; here a call under the
// limit starts at once.
export type ConcurrencyLimit = <T>(task: () => Promise<T>) => Promise<T>;

export function concurrencyLimit(max: number): ConcurrencyLimit {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be an integer >= 1, got ${max}`);
  let active = 0;
  const waiting: (() => void)[] = [];
  // A finished call hands its slot to the next in line, so no call arriving meanwhile puts one over the limit.
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  const run = <T>(task: () => Promise<T>): Promise<T> => {
    let running: Promise<T>;
    try {
      running = task();
    } catch (error) {
      release();
      return Promise.reject(error as Error);
    }
    running.then(release, release);
    return running;
  };
  return (task) => {
    if (active < max) {
      active++;
      return run(task);
    }
    return new Promise<void>((resolve) => waiting.push(resolve)).then(() => run(task));
  };
}
