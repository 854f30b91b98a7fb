/**
 * The threads interface's service layer, one file per resource (service/*.ts): rules, transactions
 * and events. The run engine (runs/engine.ts) executes runs; these create, read, cancel and resume them.
 * This file is the area's public surface (routes, tests, other areas).
 */
export { createAssistant, deleteAssistant, getAssistant, listAssistants, modifyAssistant } from './service/assistants.js';
export { createThread, deleteThread, getThread, modifyThread } from './service/threads.js';
export { createMessage, deleteMessage, getMessage, listMessages, modifyMessage } from './service/messages.js';
export {
  cancelRun,
  createRun,
  createThreadAndRun,
  listRuns,
  modifyRun,
  readRun,
  runAssistant,
  submitToolOutputs,
  type AssistantDefaults,
  type CreateOptions,
} from './service/runs.js';
export { getStep, listSteps } from './service/steps.js';
export { watchMs } from './runs/jobs.js';
export type { RunRow } from './store/runs.js';
export { locate as locateThreadObject, type Located as LocatedThreadObject } from './store/locate.js';
