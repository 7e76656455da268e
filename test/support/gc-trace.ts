/**
 * The bytes each young-generation collection promoted to the old generation, in order, read from
 * the output of a node run with `--trace-gc-nvp` (one `gc=s … promoted=<bytes> …` line per scavenge).
 */
export function promotedPerScavenge(trace: string): number[] {
  return [...trace.matchAll(/ gc=s .* promoted=(\d+) /g)].map(([, bytes]) => Number(bytes));
}

/** The mean of `promotedPerScavenge`, in bytes. */
export function meanPromoted(promoted: readonly number[]): number {
  return promoted.reduce((sum, bytes) => sum + bytes, 0) / promoted.length;
}
