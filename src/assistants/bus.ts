import { ChangeBus } from '../core/bus.js';

/** Wakes whoever follows a run when its event log grows (core/bus.ts); writers notify `standin_runs`. */
export class RunBus extends ChangeBus {
  constructor() {
    super('standin_runs');
  }
}
