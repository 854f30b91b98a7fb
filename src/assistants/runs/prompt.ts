import {
  countMessage,
  countPrompt,
  FILE_SEARCH_FUNCTION,
  formatCodeOutput,
  formatFileSearchOutput,
  interpreterFunction,
} from '../../models/service.js';
import type { ChatMessage, ChatRequest, ChatTool } from '../../models/types.js';
import { fromJson } from '../../store/db.js';
import type { FunctionToolCall, MessageContent, ResponseFormat, StepDetails, Tool, ToolChoice, TruncationStrategy } from '../objects.js';
import type { MessageRow } from '../store/messages.js';
import type { RunRow } from '../store/runs.js';
import type { StepRow } from '../store/steps.js';
import { codeFunctionName, codeRounds, MAX_CODE_ROUNDS, type StoredCodeCall } from './code-calls.js';
import { MAX_SEARCH_ROUNDS, searchFunctionName, searchRounds, type StoredFileSearchCall } from './search-calls.js';

/** What a turn's prompt is built from: the run, its thread's messages, its steps so far, the model's context window. */
export interface PromptInput {
  run: Pick<
    RunRow,
    | 'model'
    | 'instructions'
    | 'tools'
    | 'truncation_strategy'
    | 'tool_choice'
    | 'response_format'
    | 'temperature'
    | 'top_p'
    | 'parallel_tool_calls'
    | 'max_prompt_tokens'
    | 'prompt_used'
    | 'max_completion_tokens'
    | 'completion_used'
  >;
  /** The thread's messages, in creation order. */
  messages: readonly MessageRow[];
  /** The run's steps, in creation order. */
  steps: readonly StepRow[];
  /** Tokens the model takes in (prompt and completion). */
  contextWindow: number;
  /** The run can search files: it has the file_search tool and vector stores to search. */
  fileSearch?: boolean;
  /** The run can run code (it has the code_interpreter tool and Standin an executor): the files its session holds. */
  interpreter?: { files: readonly { path: string; filename: string }[] };
}

/** The model request, or why the run ends `incomplete` instead. */
export type Prompt = { request: ChatRequest } | { incomplete: 'max_prompt_tokens' | 'max_completion_tokens' };

/** One part of the history: a thread message, or one turn's tool calls with their outputs (pinned: never dropped). */
interface Part {
  key: string;
  items: ChatMessage[];
  pinned: boolean;
}

/** What is kept back of the window for the completion when max_prompt_tokens does not bound the prompt. */
const completionReserve = (window: number) => Math.min(4096, Math.floor(window / 4));

/**
 * The model's input for one turn, a pure function of its input: instructions as the system message, the
 * thread's messages in order, and this run's earlier tool calls with their outputs (file searches as
 * calls of the file search function, their results as its output). file_search is offered as that
 * function (`request.retrieval` names it) while the run can search, and forced by a tool_choice naming
 * it until the run has searched; after MAX_SEARCH_ROUNDS searching turns tool_choice is `none`. Truncation:
 * `last_messages` keeps the n most recent thread messages; `auto` drops messages from the middle (after
 * the first) until the prompt fits the budget — max_prompt_tokens minus what earlier turns used, else
 * the context window less a completion reserve. A prompt still over max_prompt_tokens ends the run
 * `incomplete` (max_prompt_tokens); a spent max_completion_tokens ends it `incomplete`
 * (max_completion_tokens).
 */
export function buildPrompt({ run, messages, steps, contextWindow, fileSearch = false, interpreter }: PromptInput): Prompt {
  const tools = fromJson<Tool[]>(run.tools) ?? [];
  const fnTools: ChatTool[] = tools.flatMap((t) => (t.type === 'function' ? [{ type: 'function' as const, function: t.function }] : []));
  const searchName = searchFunctionName(fnTools);
  const codeName = codeFunctionName(new Set([...fnTools.map((f) => f.function.name), searchName]));
  const history = historyOf(messages, steps, searchName, codeName);
  const rounds = searchRounds(steps);
  const ran = codeRounds(steps);
  const searching = fileSearch && tools.some((t) => t.type === 'file_search');
  const coding = interpreter !== undefined && tools.some((t) => t.type === 'code_interpreter');
  if (searching) fnTools.push({ type: 'function', function: { ...FILE_SEARCH_FUNCTION, name: searchName } });
  if (coding) fnTools.push({ type: 'function', function: interpreterFunction(codeName, interpreter.files) });
  const system: ChatMessage[] = run.instructions ? [{ role: 'system', content: run.instructions }] : [];
  const strategy = fromJson<TruncationStrategy>(run.truncation_strategy) ?? { type: 'auto' };

  let kept = history;
  if (strategy.type === 'last_messages') {
    const free = history.filter((h) => !h.pinned);
    const drop = new Set(free.slice(0, Math.max(0, free.length - Number(strategy.last_messages))));
    kept = history.filter((h) => !drop.has(h));
  }
  let budget = contextWindow - completionReserve(contextWindow);
  if (run.max_prompt_tokens != null) budget = Math.min(budget, Number(run.max_prompt_tokens) - Number(run.prompt_used));
  let total = countPrompt([...system, ...kept.flatMap((h) => h.items)], fnTools);
  if (total > budget && strategy.type === 'auto') ({ kept, total } = dropMiddle(kept, total, budget));
  if (run.max_prompt_tokens != null && total > budget) return { incomplete: 'max_prompt_tokens' };

  let maxTokens: number | null = null;
  if (run.max_completion_tokens != null) {
    maxTokens = Number(run.max_completion_tokens) - Number(run.completion_used);
    if (maxTokens <= 0) return { incomplete: 'max_completion_tokens' };
  }
  const request: ChatRequest = {
    model: run.model,
    messages: [...system, ...kept.flatMap((h) => h.items)],
    temperature: run.temperature,
    top_p: run.top_p,
    max_tokens: maxTokens,
  };
  if (fnTools.length) {
    request.tools = fnTools;
    const choice = fromJson<ToolChoice>(run.tool_choice) ?? 'auto';
    request.tool_choice =
      (searching && rounds >= MAX_SEARCH_ROUNDS) || (coding && ran >= MAX_CODE_ROUNDS)
        ? 'none'
        : chatToolChoice(choice, searching && rounds === 0 ? searchName : undefined, coding && ran === 0 ? codeName : undefined);
    request.parallel_tool_calls = run.parallel_tool_calls === 1 || (run.parallel_tool_calls as unknown) === true;
  }
  if (searching) request.retrieval = { name: searchName };
  if (coding) request.interpreter = { name: codeName };
  const format = fromJson<ResponseFormat>(run.response_format);
  if (format && format !== 'auto') request.response_format = format;
  return { request };
}

/**
 * Thread messages and the run's tool-call turns, interleaved in creation order (ids are time-ordered). A
 * file search is a call of `searchName` with the model's arguments; its output is its results, each
 * under its marker (`m` counts the run's searches in order). A code_interpreter call is a call of
 * `codeName` with its code; its output is what the code printed and the links of the files it wrote.
 */
function historyOf(messages: readonly MessageRow[], steps: readonly StepRow[], searchName: string, codeName: string): Part[] {
  const history: Part[] = messages.map((m) => ({ key: suffix(m.id), items: [toChat(m)], pinned: false }));
  let m = 0;
  for (const s of steps) {
    const details = fromJson<StepDetails>(s.step_details);
    if (details?.type !== 'tool_calls') continue;
    const calls: (FunctionToolCall | StoredFileSearchCall | StoredCodeCall)[] = details.tool_calls;
    if (!calls.length) continue;
    const outputs: ChatMessage[] = [];
    const asked = calls.map((c) => {
      if (c.type === 'function') {
        outputs.push({ role: 'tool', tool_call_id: c.id, content: c.function.output ?? '' });
        return { id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } };
      }
      if (c.type === 'code_interpreter') {
        const logs = c.code_interpreter.outputs.flatMap((o) => (o.type === 'logs' ? [o.logs] : [])).join('\n');
        outputs.push({
          role: 'tool',
          tool_call_id: c.id,
          content: formatCodeOutput(
            logs,
            (c.files ?? []).map((f) => f.path),
          ),
        });
        return {
          id: c.id,
          type: 'function' as const,
          function: { name: codeName, arguments: JSON.stringify({ code: c.code_interpreter.input }) },
        };
      }
      const passages = (c.file_search.results ?? []).map((r) => ({
        fileName: r.file_name,
        score: r.score,
        text: (r.content ?? []).map((x) => x.text).join('\n'),
      }));
      outputs.push({ role: 'tool', tool_call_id: c.id, content: formatFileSearchOutput(m++, passages) });
      return { id: c.id, type: 'function' as const, function: { name: searchName, arguments: c.arguments ?? '{}' } };
    });
    history.push({ key: suffix(s.id), items: [{ role: 'assistant', content: null, tool_calls: asked }, ...outputs], pinned: true });
  }
  return history.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** `auto` truncation: keeps the first and the latest thread message (and the run's tool calls); drops the oldest of the rest until the prompt fits. */
function dropMiddle(parts: Part[], total: number, budget: number): { kept: Part[]; total: number } {
  const kept = parts.slice();
  const first = kept.findIndex((h) => !h.pinned);
  let last = kept.length - 1;
  while (last >= 0 && kept[last].pinned) last--;
  for (let i = first + 1; first >= 0 && total > budget && i < last;) {
    if (kept[i].pinned) {
      i++;
      continue;
    }
    total -= kept[i].items.reduce((n, m) => n + countMessage(m), 0);
    kept.splice(i, 1);
    last--;
  }
  return { kept, total };
}

/**
 * The Chat Completions tool_choice: a named function as such; file_search and code_interpreter as their
 * functions while they may be forced (`searchName`, `codeName`: until the run has searched, or run code);
 * after that, or without an executor, forcing them means `auto`.
 */
function chatToolChoice(choice: ToolChoice, searchName?: string, codeName?: string): ChatRequest['tool_choice'] {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && choice.function) return { type: 'function', function: { name: choice.function.name } };
  if (choice.type === 'file_search' && searchName) return { type: 'function', function: { name: searchName } };
  if (choice.type === 'code_interpreter' && codeName) return { type: 'function', function: { name: codeName } };
  return 'auto';
}

const suffix = (id: string) => id.slice(id.indexOf('_') + 1);

/** A thread message as model input: text blocks joined; images named, since the providers take text. */
function toChat(m: MessageRow): ChatMessage {
  const blocks = (fromJson<MessageContent[]>(m.content) ?? []).map((b) => {
    if (b.type === 'text') return b.text.value;
    if (b.type === 'image_url') return `[image: ${b.image_url.url}]`;
    if (b.type === 'image_file') return `[image file: ${b.image_file.file_id}]`;
    return b.refusal;
  });
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content: blocks.join('\n') };
}
