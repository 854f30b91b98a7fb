import { afterEach, describe, expect, it } from 'vitest';
import { endV8StartTuning, tuneV8ForStart, v8StartTuning } from './v8-start.js';

describe('V8 tuned for the start', () => {
  afterEach(() => endV8StartTuning());

  it('holds off the optimizing compiler and grows the young generation faster until the start is over', () => {
    tuneV8ForStart(60_000, '');
    expect(v8StartTuning()).toEqual(['--no-turbofan', '--semi-space-growth-factor=4']);
    endV8StartTuning();
    expect(v8StartTuning()).toEqual([]);
    endV8StartTuning();
    expect(v8StartTuning()).toEqual([]);
  });

  it('ends by itself after its fallback delay in a process that never listens', async () => {
    tuneV8ForStart(20, '');
    expect(v8StartTuning()).not.toEqual([]);
    for (let t = 0; v8StartTuning().length && t < 100; t++) await new Promise((r) => setTimeout(r, 10));
    expect(v8StartTuning()).toEqual([]);
  });

  it('leaves alone what Node was started with a flag of its own for', () => {
    for (const flags of ['--no-opt', '--turbofan', '--max-old-space-size=512 --no-turbofan', '--always-turbofan']) {
      tuneV8ForStart(60_000, flags);
      expect(v8StartTuning()).toEqual(['--semi-space-growth-factor=4']);
      endV8StartTuning();
    }
    tuneV8ForStart(60_000, '--semi-space-growth-factor=4 --no-opt');
    expect(v8StartTuning()).toEqual([]);
  });
});
