import { CODE_INTERPRETER_FUNCTION } from '../../models/service.js';
import { fromJson } from '../../store/db.js';
import type { CodeInterpreterToolCall, StepDetails, Tool } from '../objects.js';
import type { StepRow } from '../store/steps.js';

/**
 * The code_interpreter calls of a run as its steps keep them (pure helpers of prompt.ts, turn.ts and the
 * turn writer). A call is stored as the platform shows it, `{id, type: code_interpreter,
 * code_interpreter: {input, outputs[]}}`, plus the files the code wrote (`files`: sandbox path → file id),
 * which the views leave out: they give the model the links it may write, and the reply's `file_path`
 * annotations their files.
 */
export type CodeCall = CodeInterpreterToolCall;
export type StoredCodeCall = CodeCall & { files?: { path: string; file_id: string }[] };

/** Model turns of one run that may run code; then tool_choice becomes `none` (a model cannot loop on it forever). */
export const MAX_CODE_ROUNDS = 8;

/** Whether the run has the code_interpreter tool. */
export const hasInterpreter = (tools: readonly Tool[]) => tools.some((t) => t.type === 'code_interpreter');

/** The run's code_interpreter calls, in order. */
export function codeCalls(steps: readonly StepRow[]): StoredCodeCall[] {
  const out: StoredCodeCall[] = [];
  for (const s of steps) {
    const details = fromJson<StepDetails>(s.step_details);
    if (details?.type !== 'tool_calls') continue;
    for (const c of details.tool_calls) if (c.type === 'code_interpreter') out.push(c);
  }
  return out;
}

/** How many model turns of the run ran code. */
export function codeRounds(steps: readonly StepRow[]): number {
  return steps.filter((s) => {
    const details = fromJson<StepDetails>(s.step_details);
    return details?.type === 'tool_calls' && details.tool_calls.some((c) => c.type === 'code_interpreter');
  }).length;
}

/** Sandbox path → the file the run's code last wrote there: the reply's `sandbox:` links become file_path annotations. */
export function outputFileMap(steps: readonly StepRow[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const c of codeCalls(steps)) for (const f of c.files ?? []) map.set(f.path, f.file_id);
  return map;
}

/**
 * The images the run's code produced since its last message: the next message shows them as `image_file`
 * blocks ahead of its text, as the platform's replies do.
 */
export function pendingImages(steps: readonly StepRow[]): string[] {
  let images: string[] = [];
  for (const s of steps) {
    const details = fromJson<StepDetails>(s.step_details);
    if (details?.type === 'message_creation') images = [];
    else if (details?.type === 'tool_calls')
      for (const c of details.tool_calls)
        if (c.type === 'code_interpreter') for (const o of c.code_interpreter.outputs) if (o.type === 'image') images.push(o.image.file_id);
  }
  return images;
}

/** The name the code interpreter function gets: `code_interpreter`, unless a function of the run (or file search) has it. */
export function codeFunctionName(taken: ReadonlySet<string>): string {
  let name = CODE_INTERPRETER_FUNCTION.name;
  for (let n = 2; taken.has(name); n++) name = `${CODE_INTERPRETER_FUNCTION.name}_${n}`;
  return name;
}
