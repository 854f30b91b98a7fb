import { describe, expect, it } from 'vitest';
import { StopCutter } from './stop.js';

describe('StopCutter', () => {
  it('lets text through up to the first stop sequence, across pieces', () => {
    const c = new StopCutter(['END', 'xy']);
    const out = ['ab', 'cE', 'N', 'Dmore'].map((p) => c.push(p)).join('') + c.end();
    expect(out).toBe('abc');
    expect(c.hit).toBe(true);
    expect(c.text).toBe('abc');
  });

  it('the earliest sequence wins, and a held tail is flushed at the end when none is met', () => {
    const c = new StopCutter(['cd', 'b']);
    expect(c.push('abcd')).toBe('a');
    const d = new StopCutter(['zzz']);
    expect(d.push('abz') + d.push('z') + d.end()).toBe('abzz');
    expect(d.hit).toBe(false);
  });
});
