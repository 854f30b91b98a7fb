import { afterEach, describe, expect, it } from 'vitest';
import { holdOptimizing, optimizingHeld, resumeOptimizing } from './tiering.js';

describe('optimizing held off for the start', () => {
  afterEach(() => resumeOptimizing());

  it('is held until resumed, and resuming twice is harmless', () => {
    holdOptimizing(60_000, '');
    expect(optimizingHeld()).toBe(true);
    resumeOptimizing();
    expect(optimizingHeld()).toBe(false);
    resumeOptimizing();
    expect(optimizingHeld()).toBe(false);
  });

  it('resumes by itself after its fallback delay in a process that never listens', async () => {
    holdOptimizing(20, '');
    expect(optimizingHeld()).toBe(true);
    for (let t = 0; optimizingHeld() && t < 100; t++) await new Promise((r) => setTimeout(r, 10));
    expect(optimizingHeld()).toBe(false);
  });

  it('leaves V8 alone when Node was started with a flag of its own for it', () => {
    for (const flags of ['--no-opt', '--turbofan', '--max-old-space-size=512 --no-turbofan', '--always-turbofan']) {
      holdOptimizing(60_000, flags);
      expect(optimizingHeld()).toBe(false);
    }
  });
});
