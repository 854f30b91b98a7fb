/** A seeded pseudo-random generator (a linear congruential one, numbers in [0, 1)), so a failing test can be replayed. */
export function random(seed: number): () => number {
  return () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
}
