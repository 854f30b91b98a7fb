/**
 * The retry schedule of webhook deliveries: exponential backoff with jitter, inside a 72-hour window of
 * the Standin clock. Pure, so tests pin the random source.
 */
export const RETRY_WINDOW_MS = 72 * 3_600_000;
const BASE_MS = 5_000;
const CAP_MS = 3_600_000;

/** Delay before the next attempt after `failures` failed attempts (1-based): 5 s · 2^(n-1), at most 1 h, ±20 % jitter. */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const exp = Math.min(CAP_MS, BASE_MS * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(exp * (0.8 + 0.4 * random()));
}

/**
 * When to try again after a failure at `now`, or null when the window is over. The last attempt is made
 * at the window's end when the backoff would overshoot it, so every delivery gets the full 72 hours.
 */
export function nextAttemptAt(
  firstAttemptAt: number,
  now: number,
  failures: number,
  random: () => number = Math.random,
  windowMs = RETRY_WINDOW_MS,
): number | null {
  const deadline = firstAttemptAt + windowMs;
  if (now >= deadline) return null;
  return Math.min(now + retryDelayMs(failures, random), deadline);
}
