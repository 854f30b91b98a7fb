import { describe, expect, it } from 'vitest';
import { pointerToParam } from './validation.js';

describe('validation', () => {
  it('turns JSON pointers into the platform param paths', () => {
    expect(pointerToParam('/bidding_config/custom_audience_bid_multipliers/0/bid_multiplier_micros')).toBe('bidding_config.custom_audience_bid_multipliers[0].bid_multiplier_micros');
    expect(pointerToParam('')).toBe('');
    expect(pointerToParam('/a~1b/2/c')).toBe('a/b[2].c');
  });
});
