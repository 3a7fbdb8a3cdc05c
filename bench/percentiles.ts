// Small numeric helpers: percentiles of latency samples and medians across repeated runs.

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

/** Nearest-rank percentiles of unsorted samples; NaN when there are none. */
export function percentiles(samples: readonly number[]): Percentiles {
  if (samples.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? Number.NaN;
  return { p50: at(50), p90: at(90), p99: at(99) };
}

/** Median of the finite values; null when there are none. */
export function median(values: readonly (number | null)[]): number | null {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return null;
  const mid = Math.floor(finite.length / 2);
  return finite.length % 2 === 1 ? (finite[mid] as number) : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

/** Largest of the finite values; null when there are none. */
export function maxOf(values: readonly (number | null)[]): number | null {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return finite.length === 0 ? null : Math.max(...finite);
}
