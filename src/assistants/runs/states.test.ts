import { describe, expect, it } from 'vitest';
import { ACTIVE, isActive, isTerminal, sourcesOf, TERMINAL, WORKER_STATUSES } from './states.js';

describe('the run state machine', () => {
  it('guards each move by the statuses it may leave', () => {
    expect(sourcesOf('in_progress')).toEqual(['queued']);
    expect(sourcesOf('requires_action')).toEqual(['in_progress']);
    expect(sourcesOf('queued')).toEqual(['requires_action']);
    expect(sourcesOf('cancelling')).toEqual(['queued', 'in_progress', 'requires_action']);
    expect(sourcesOf('cancelled')).toEqual(['cancelling']);
    for (const end of ['completed', 'incomplete', 'failed'] as const) expect(sourcesOf(end)).toEqual(['in_progress']);
    expect(sourcesOf('expired')).toEqual([...ACTIVE]);
  });

  it('ends nowhere: a terminal status has no way out', () => {
    for (const s of TERMINAL) for (const to of [...ACTIVE, ...TERMINAL]) expect(sourcesOf(to)).not.toContain(s);
  });

  it('tells active from terminal, and which active runs a worker acts on', () => {
    expect(ACTIVE.every(isActive) && !ACTIVE.some(isTerminal)).toBe(true);
    expect(TERMINAL.every(isTerminal) && !TERMINAL.some(isActive)).toBe(true);
    expect(WORKER_STATUSES).toEqual(['queued', 'in_progress', 'cancelling']);
  });
});
