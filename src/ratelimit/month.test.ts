import { describe, expect, it } from 'vitest';
import { monthKey, msToMonthEnd } from './month.js';

describe('UTC months by arithmetic', () => {
  it('agrees with Date.UTC on every month boundary from 1970 to 2100', () => {
    for (let y = 1970; y <= 2100; y++) {
      for (let m = 0; m < 12; m++) {
        const start = Date.UTC(y, m, 1);
        const next = Date.UTC(y, m + 1, 1);
        const key = `${y}-${String(m + 1).padStart(2, '0')}`;
        expect(monthKey(start)).toBe(key);
        expect(monthKey(next - 1)).toBe(key);
        expect(msToMonthEnd(start)).toBe(next - start);
        expect(msToMonthEnd(next - 1)).toBe(1);
      }
    }
  });
});
