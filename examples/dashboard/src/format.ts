const numbers = new Intl.NumberFormat('en-US');
const percents = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1, signDisplay: 'exceptZero' });

export const formatCount = (count: number): string => numbers.format(count);

/** "+3.2%", "−1%", or "n/a" when there is nothing to compare with. */
export const formatChange = (change: number | null | undefined): string =>
  change === null || change === undefined ? 'n/a' : percents.format(change);
