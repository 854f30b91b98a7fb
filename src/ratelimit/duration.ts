/**
 * Durations as the platform writes them in `x-ratelimit-reset-*`: Go's `time.Duration` text
 * (`0s`, `20ms`, `1s`, `8.64s`, `6m0s`, `1m30.5s`, `1h0m0s`). Standin keeps whole milliseconds and
 * rounds up, so a client that waits the advertised time never comes back too early.
 */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms - 1e-9));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  const whole = Math.floor(millis / 1000);
  const frac = millis % 1000;
  const seconds = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
