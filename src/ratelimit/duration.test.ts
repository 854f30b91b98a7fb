import { describe, expect, it } from 'vitest';
import { formatDuration } from './duration.js';

describe('formatDuration (Go time.Duration text, as the platform sends it)', () => {
  it.each([
    [0, '0s'],
    [-5, '0s'],
    [1, '1ms'],
    [0.4, '1ms'],
    [20, '20ms'],
    [999, '999ms'],
    [1000, '1s'],
    [8640, '8.64s'],
    [1500, '1.5s'],
    [1001, '1.001s'],
    [60_000, '1m0s'],
    [90_500, '1m30.5s'],
    [360_000, '6m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
    [86_400_000, '24h0m0s'],
  ])('%s ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
