import { describe, expect, it } from 'vitest';
import { hundredths } from './observe.js';

describe('hundredths', () => {
  it('writes what JSON writes for the latency rounded to hundredths', () => {
    const values = [0, 0.004, 0.005, 0.07, 0.1, 1, 1.5, 1.84, 1.999, 2.005, 9.995, 12, 99.99, 123.456, 1000.01, 86_400_000.5, 1e13 + 0.25];
    for (let h = 0; h < 20_000; h++) values.push(h / 100, h / 100 + 0.003);
    for (const ms of values) expect(hundredths(ms)).toBe(JSON.stringify(Math.round(ms * 100) / 100));
  });
});
