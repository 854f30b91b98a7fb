/** What the control plane offers other areas (the snapshots area replaces state as reset empties it). */
export { emptyStateTables, KEEP_SETTINGS, resetState, stateTables } from './reset.js';
export { CLOCK_KEY, GENERATION_KEY as CLOCK_GENERATION_KEY, resetClock, saveClock } from './clock-store.js';
