import { FILE_SEARCH_FUNCTION } from '../../models/service.js';
import type { ChatTool } from '../../models/types.js';
import { fromJson } from '../../store/db.js';
import type { StepDetails, Tool } from '../objects.js';
import type { StepRow } from '../store/steps.js';

/**
 * The file_search calls of a run as its steps keep them (pure helpers of prompt.ts, turn.ts and the
 * turn writer). A call is stored as the platform shows it, `{id, type: file_search, file_search:
 * {ranking_options, results[{file_id, file_name, score, content}]}}`, plus the model's `arguments` (the
 * query it asked), which the views leave out. The run's m-th search (in step and call order) gives the
 * markers `【m:i†source】` of its results.
 */
export type FileSearchCall = Extract<Extract<StepDetails, { type: 'tool_calls' }>['tool_calls'][number], { type: 'file_search' }>;
export type StoredFileSearchCall = FileSearchCall & { arguments?: string };

/** Searches in one run that the model is offered the tool for, at most; then tool_choice becomes `none`. */
export const MAX_SEARCH_ROUNDS = 8;

/** The run's file_search settings (the tool's effective settings), or undefined without the tool. */
export function fileSearchSettings(tools: readonly Tool[]) {
  const tool = tools.find((t) => t.type === 'file_search');
  return tool?.type === 'file_search' ? (tool.file_search ?? {}) : undefined;
}

/** The run's file_search calls in order (index = the `m` of their markers). */
export function searchCalls(steps: readonly StepRow[]): StoredFileSearchCall[] {
  const out: StoredFileSearchCall[] = [];
  for (const s of steps) {
    const details = fromJson<StepDetails>(s.step_details);
    if (details?.type !== 'tool_calls') continue;
    for (const c of details.tool_calls) if (c.type === 'file_search') out.push(c);
  }
  return out;
}

/** How many model turns of the run searched. */
export function searchRounds(steps: readonly StepRow[]): number {
  return steps.filter((s) => {
    const details = fromJson<StepDetails>(s.step_details);
    return details?.type === 'tool_calls' && details.tool_calls.some((c) => c.type === 'file_search');
  }).length;
}

/** `m:i` of a marker `【m:i†…】` → the file result i of the run's m-th search came from, over the run's searches so far. */
export function citationMap(steps: readonly StepRow[]): Map<string, string> {
  const map = new Map<string, string>();
  searchCalls(steps).forEach((c, m) => (c.file_search.results ?? []).forEach((r, i) => map.set(`${m}:${i}`, r.file_id)));
  return map;
}

/** The name the file search function gets: `file_search`, unless a function of the run has it. */
export function searchFunctionName(functions: readonly ChatTool[]): string {
  const taken = new Set(functions.map((f) => f.function.name));
  let name = FILE_SEARCH_FUNCTION.name;
  for (let n = 2; taken.has(name); n++) name = `${FILE_SEARCH_FUNCTION.name}_${n}`;
  return name;
}
