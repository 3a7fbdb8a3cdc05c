// Waves of upstream calls: how many times a request had to wait for an answer before it could ask
// again. Counted from the sandbox's request log (each call's arrival and end on one clock): a call that
// starts after another call of the same request ended belongs to a wave after that call's. With every
// call started together, one wave; a call made from what another answered, two.

/** What the count needs of a sandbox log entry. */
export interface TimedCall {
  startedAt: number;
  /** null: never answered (its socket went away); it ends no wave. */
  endedAt: number | null;
}

/**
 * The waves of one request's calls: the longest chain of calls each starting after the one before it
 * ended. 0 for no call.
 */
export function countWaves(calls: readonly TimedCall[]): number {
  const sorted = [...calls].sort((a, b) => a.startedAt - b.startedAt);
  const waveOf: number[] = [];
  let most = 0;
  sorted.forEach((call, i) => {
    let wave = 1;
    for (let j = 0; j < i; j++) {
      const before = sorted[j] as TimedCall;
      if (before.endedAt !== null && before.endedAt <= call.startedAt) wave = Math.max(wave, (waveOf[j] as number) + 1);
    }
    waveOf.push(wave);
    most = Math.max(most, wave);
  });
  return most;
}
