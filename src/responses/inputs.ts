import { invalid, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import { partChecker } from '../core/validation.js';
import { readFileBytes } from '../files/service.js';
import type { ChatContentPart, ChatMessage } from '../models/types.js';
import type { Exec } from '../store/db.js';
import { extractFileText } from '../vector-stores/service.js';
import * as S from './input-schemas.js';
import type { ItemResource } from './input-schemas.js';
import * as itemsStore from './items-store.js';
import type { ItemEntry } from './items-store.js';
import { fetchUrl, imageInfo, MAX_FILE_BYTES, MAX_IMAGE_BYTES, readDataUrl, type Fetched } from './media.js';
import { openReasoning } from './reasoning.js';
import { hostedInputItem } from './tools/input-items.js';
import { argumentsOf } from './custom-tools.js';
import * as store from './store.js';

/**
 * The input of a response (or of a conversation's items): each item checked by its kind, item references
 * resolved within the project, ids given to items that have none, and each item read into the chat message
 * the model sees — an image as its type and pixel size (from its header), a file as its extracted text
 * (an upstream model gets the image and the file themselves as content parts). docs/responses.md, "Inputs".
 */

export type { ItemEntry } from './items-store.js';

/** What the conversations area lends the responses area (`ctx.services.conversations`). */
export interface ConversationLink {
  /** The chat messages of a conversation's items, in order; undefined when the project has no such conversation. */
  context(exec: Exec, projectId: string, id: string): Promise<ChatMessage[] | undefined>;
  /** Appends items to a conversation; false when it is gone. */
  append(exec: Exec, projectId: string, id: string, entries: ItemEntry[]): Promise<boolean>;
  /** An item of one of the project's conversations (an `item_reference`). */
  findItem(exec: Exec, projectId: string, itemId: string): Promise<ItemEntry | undefined>;
}

declare module '../core/module.js' {
  interface Services {
    /** Set by the conversations module (conversations/module.ts). */
    conversations?: ConversationLink;
  }
}

type Checked = { ref: string; item?: undefined } | { ref?: undefined; item: ItemResource };

const checkMessage = partChecker<S.MessageInput>(S.MessageInput);
const checkFunctionCall = partChecker<S.FunctionCallInput>(S.FunctionCallInput);
const checkFunctionOutput = partChecker<S.FunctionCallOutputInput>(S.FunctionCallOutputInput);
const checkReasoning = partChecker<S.ReasoningInput>(S.ReasoningInput);
const checkCustomCall = partChecker<S.CustomToolCallInput>(S.CustomToolCallInput);
const checkCustomOutput = partChecker<S.CustomToolCallOutputInput>(S.CustomToolCallOutputInput);
const checkReference = partChecker<{ id: string }>(S.ItemReference);
const PARTS: Record<string, (data: unknown, at: string) => S.ContentPart> = {
  input_text: partChecker(S.InputText),
  input_image: partChecker(S.InputImage),
  input_file: partChecker(S.InputFile),
  output_text: partChecker(S.OutputText),
  refusal: partChecker(S.Refusal),
};
const ITEM_TYPES = [
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
  'item_reference',
];
/** The content parts each role may send. */
const ROLE_PARTS: Record<string, string[]> = {
  user: ['input_text', 'input_image', 'input_file'],
  system: ['input_text', 'input_image', 'input_file'],
  developer: ['input_text', 'input_image', 'input_file'],
  assistant: ['output_text', 'refusal', 'input_text'],
};

const pointer = (param: string) =>
  '/' +
  param
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .join('/');

/** A tool call's output (of a function or a custom tool): text, or the parts a user message may have. */
function toolOutputOf(output: string | unknown[], at: string): string | (S.InputText | S.InputImage | S.InputFile)[] {
  if (typeof output === 'string') return output;
  return output.map((part, i) => checkPart(part, `${at}.output[${i}]`, ROLE_PARTS.user) as S.InputText | S.InputImage | S.InputFile);
}

/** Checks one content part of `allowed` types at `at` (`input[0].content[1]`) and gives it its stored form. */
function checkPart(raw: unknown, at: string, allowed: string[]): S.ContentPart {
  const type = (raw as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !allowed.includes(type))
    throw invalid(
      `Invalid value for '${at}.type': ${JSON.stringify(type ?? null)}. Supported values here are: ${allowed.map((t) => `'${t}'`).join(', ')}.`,
      `${at}.type`,
      'invalid_value',
    );
  const part = PARTS[type](raw, pointer(at));
  if (part.type === 'input_image') {
    if (!part.image_url === !part.file_id) throw invalid(`'${at}' needs exactly one of 'image_url' and 'file_id'.`, at, 'invalid_value');
    return { type: 'input_image', image_url: part.image_url ?? null, file_id: part.file_id ?? null, detail: part.detail ?? 'auto' };
  }
  if (part.type === 'input_file') {
    const sources = [part.file_id, part.file_data, part.file_url].filter((s) => s !== undefined && s !== null);
    if (sources.length !== 1) throw invalid(`'${at}' needs exactly one of 'file_id', 'file_data' and 'file_url'.`, at, 'invalid_value');
    const { prompt_cache_breakpoint: _hint, ...kept } = part;
    return kept;
  }
  if (part.type === 'output_text')
    return { type: 'output_text', text: part.text, annotations: part.annotations ?? [], logprobs: part.logprobs ?? [] };
  if (part.type === 'input_text') return { type: 'input_text', text: part.text };
  return part;
}

/** Checks one input item at `at` by its `type` (a message may leave it out, as may an item reference). */
function checkItem(ctx: Pick<Ctx, 'clock'>, raw: unknown, at: string): Checked {
  const checked = checkItemResource(ctx, raw, at);
  return 'type' in checked ? { item: checked } : { ref: checked.ref };
}

function checkItemResource(ctx: Pick<Ctx, 'clock'>, raw: unknown, at: string): { ref: string } | ItemResource {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(
      `Invalid type for '${at}': expected an object, but got ${raw === null ? 'null' : typeof raw} instead.`,
      at,
      'invalid_type',
    );
  const r = raw as Record<string, unknown>;
  const type = r.type ?? (r.role !== undefined ? 'message' : r.id !== undefined ? 'item_reference' : undefined);
  if (type === undefined) throw invalid(`Missing required parameter: '${at}.type'.`, `${at}.type`, 'missing_required_parameter');
  const p = pointer(at);
  switch (type) {
    case 'message': {
      const m = checkMessage(raw, p);
      const allowed = ROLE_PARTS[m.role];
      const content: S.ContentPart[] =
        typeof m.content === 'string'
          ? [
              m.role === 'assistant'
                ? { type: 'output_text', text: m.content, annotations: [], logprobs: [] }
                : { type: 'input_text', text: m.content },
            ]
          : m.content.map((part, i) => checkPart(part, `${at}.content[${i}]`, allowed));
      return { id: m.id ?? newId('msg', ctx.clock), type: 'message', status: m.status ?? 'completed', role: m.role, content };
    }
    case 'function_call': {
      const c = checkFunctionCall(raw, p);
      return {
        id: c.id ?? newId('fc', ctx.clock),
        type: 'function_call',
        status: c.status ?? 'completed',
        call_id: c.call_id,
        name: c.name,
        arguments: c.arguments,
      };
    }
    case 'function_call_output': {
      const o = checkFunctionOutput(raw, p);
      const output = toolOutputOf(o.output, at);
      return {
        id: o.id ?? newId('fco', ctx.clock),
        type: 'function_call_output',
        status: o.status ?? 'completed',
        call_id: o.call_id,
        output,
      };
    }
    case 'custom_tool_call': {
      const c = checkCustomCall(raw, p);
      return {
        id: c.id ?? newId('ctc', ctx.clock),
        type: 'custom_tool_call',
        status: c.status ?? 'completed',
        call_id: c.call_id,
        name: c.name,
        input: c.input,
      };
    }
    case 'custom_tool_call_output': {
      const o = checkCustomOutput(raw, p);
      const output = toolOutputOf(o.output, at);
      return {
        id: o.id ?? newId('ctco', ctx.clock),
        type: 'custom_tool_call_output',
        status: o.status ?? 'completed',
        call_id: o.call_id,
        output,
      };
    }
    case 'reasoning': {
      // Passed back as given; its `encrypted_content` is opened (authenticated) when the item is read (messageOf).
      const { id, ...rest } = checkReasoning(raw, p);
      return { id: id ?? newId('rs', ctx.clock), ...rest };
    }
    case 'item_reference':
      return { ref: checkReference(raw, p).id };
    default: {
      // A hosted tool's item passed back (its own output, an approval response): its tool checks it.
      const hosted = typeof type === 'string' ? hostedInputItem(type) : undefined;
      if (hosted) return hosted.check(r, at);
      throw invalid(
        `Invalid value for '${at}.type': ${JSON.stringify(type)}. Supported values are: ${ITEM_TYPES.map((t) => `'${t}'`).join(', ')}.`,
        `${at}.type`,
        'invalid_value',
      );
    }
  }
}

/** The reading of one image: its type and pixel size from its header; for an upstream model, the image as a data URL. */
async function readImage(ctx: Ctx, projectId: string, part: S.InputImage, at: string): Promise<{ text: string; part: ChatContentPart }> {
  const param = `${at}.${part.file_id ? 'file_id' : 'image_url'}`;
  let data: Buffer;
  if (part.file_id) data = (await readFileBytes(ctx, projectId, part.file_id, MAX_IMAGE_BYTES)).data;
  else if (part.image_url!.startsWith('data:')) data = readDataUrl(part.image_url!, MAX_IMAGE_BYTES, param).data;
  else data = (await fetchUrl(ctx.outbound, part.image_url!, MAX_IMAGE_BYTES, param)).data;
  const info = imageInfo(data);
  if (!info) throw invalid(`'${param}' is not a PNG, JPEG, GIF or WebP image.`, param, 'invalid_image_format');
  return {
    text: `[image: ${info.mediaType}, ${info.width}x${info.height} pixels]`,
    part: {
      type: 'image_url',
      image_url: { url: `data:${info.mediaType};base64,${data.toString('base64')}`, detail: part.detail ?? 'auto' },
    },
  };
}

/** File types by media type, for a file given without a name (its extension picks the extraction). */
const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'text/csv': 'csv',
  'application/json': 'json',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
};

/** The reading of one file: its extracted text (the bounded extraction of vector store ingestion); upstream, the file itself. */
async function readFilePart(ctx: Ctx, projectId: string, part: S.InputFile, at: string): Promise<{ text: string; part: ChatContentPart }> {
  let fetched: Fetched;
  let param: string;
  if (part.file_id) {
    param = `${at}.file_id`;
    const { file, data } = await readFileBytes(ctx, projectId, part.file_id, MAX_FILE_BYTES);
    fetched = { data, mediaType: null, name: file.filename };
  } else if (part.file_data) {
    param = `${at}.file_data`;
    const url = part.file_data.startsWith('data:') ? part.file_data : `data:;base64,${part.file_data}`;
    fetched = readDataUrl(url, MAX_FILE_BYTES, param);
  } else {
    param = `${at}.file_url`;
    fetched = await fetchUrl(ctx.outbound, part.file_url!, MAX_FILE_BYTES, param);
  }
  let filename = part.filename ?? fetched.name ?? 'file';
  const ext = fetched.mediaType ? EXTENSIONS[fetched.mediaType] : undefined;
  if (ext && !/\.[A-Za-z0-9]+$/.test(filename)) filename += `.${ext}`;
  const text = await extractFileText(ctx, filename, fetched.data, param);
  const media = fetched.mediaType ?? Object.entries(EXTENSIONS).find(([, e]) => filename.toLowerCase().endsWith(`.${e}`))?.[0];
  return {
    text: `[file: ${filename}]\n${text}\n[end of file: ${filename}]`,
    part: {
      type: 'file',
      file: { filename, file_data: `data:${media ?? 'application/octet-stream'};base64,${fetched.data.toString('base64')}` },
    },
  };
}

/** The text and (when there are images or files) the content parts of a list of parts. */
async function readParts(ctx: Ctx, projectId: string, parts: S.ContentPart[], at: string) {
  const texts: string[] = [];
  const chat: ChatContentPart[] = [];
  let media = false;
  for (const [i, p] of parts.entries()) {
    const read =
      p.type === 'input_image'
        ? await readImage(ctx, projectId, p, `${at}[${i}]`)
        : p.type === 'input_file'
          ? await readFilePart(ctx, projectId, p, `${at}[${i}]`)
          : null;
    if (read) media = true;
    const text = read ? read.text : p.type === 'refusal' ? p.refusal : 'text' in p ? p.text : '';
    // An image or file reads as a block of its own between the texts around it.
    texts.push(read && texts.length ? `\n${text}\n` : read ? `${text}\n` : text);
    chat.push(read ? read.part : { type: 'text', text });
  }
  return { text: texts.join('').replace(/\n+$/, ''), parts: media ? chat : undefined };
}

/** The chat message an item becomes (null for an item the model does not see: a reasoning item). */
async function messageOf(ctx: Ctx, projectId: string, item: ItemResource, at: string): Promise<ChatMessage | null> {
  switch (item.type) {
    case 'message': {
      const { text, parts } = await readParts(ctx, projectId, item.content, `${at}.content`);
      return parts ? { role: item.role, content: text, parts } : { role: item.role, content: text };
    }
    case 'function_call':
      return callMessage(item);
    case 'custom_tool_call':
      // The model made it as a call of the tool's function (custom-tools.ts): it sees it so again.
      return callMessage({ ...item, arguments: argumentsOf(item.input) });
    case 'function_call_output':
    case 'custom_tool_call_output':
      // Chat Completions' tool messages take text only: images and files of an output go as their reading.
      return {
        role: 'tool',
        tool_call_id: item.call_id,
        content: typeof item.output === 'string' ? item.output : (await readParts(ctx, projectId, item.output, `${at}.output`)).text,
      };
    case 'reasoning':
      // The model is not shown it; what a stateless client passes back must be what this Standin sealed for
      // this project (reasoning.ts), or the turn is refused before anything runs.
      if (typeof item.encrypted_content === 'string')
        await openReasoning(ctx, projectId, item.encrypted_content, `${at}.encrypted_content`);
      return null;
    default:
      return hostedInputItem(item.type)?.message?.(item) ?? null;
  }
}

const callMessage = (item: { call_id: string; name: string; arguments: string }): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }],
});

/**
 * Reads `input` (a text, or items) at `at`: every item checked, references resolved within the project,
 * each item with an id and the chat message the model sees for it.
 */
export async function readInput(
  ctx: Ctx,
  projectId: string,
  input: string | unknown[] | null | undefined,
  at: string,
): Promise<ItemEntry[]> {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') {
    const item: ItemResource = {
      id: newId('msg', ctx.clock),
      type: 'message',
      status: 'completed',
      role: 'user',
      content: [{ type: 'input_text', text: input }],
    };
    return [{ item, message: { role: 'user', content: input } }];
  }
  const out: ItemEntry[] = [];
  for (const [i, raw] of input.entries()) {
    const checked = checkItem(ctx, raw, `${at}[${i}]`);
    if (checked.ref !== undefined) {
      const found =
        (await itemsStore.findItem(ctx.store.db, projectId, checked.ref)) ??
        (await ctx.services.conversations?.findItem(ctx.store.db, projectId, checked.ref));
      if (!found) throw notFound('item', checked.ref, `${at}[${i}].id`);
      out.push(found);
    } else out.push({ item: checked.item, message: await messageOf(ctx, projectId, checked.item, `${at}[${i}]`) });
  }
  return out;
}

/** The chat message of an output item of a response (what a later turn shows the model of it). */
export function outputEntry(item: ItemResource): ItemEntry {
  if (item.type === 'message')
    return {
      item,
      message: {
        role: 'assistant',
        content: item.content.map((p) => (p.type === 'refusal' ? p.refusal : 'text' in p ? p.text : '')).join(''),
      },
    };
  if (item.type === 'function_call') return { item, message: callMessage(item) };
  if (item.type === 'custom_tool_call') return { item, message: callMessage({ ...item, arguments: argumentsOf(item.input) }) };
  return { item, message: null };
}

/**
 * The model's messages: `instructions` first (as a developer message), then the context (the previous
 * response's, whose own instructions are not carried over, or a conversation's items), then the input.
 * The function calls of one model turn become one assistant message.
 */
export function assemble(instructions: string | null | undefined, context: ChatMessage[], input: (ChatMessage | null)[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'developer', content: instructions });
  for (const m of [...context, ...input]) {
    if (!m) continue;
    const last = messages.at(-1);
    if (m.role === 'assistant' && m.content === null && m.tool_calls && last?.role === 'assistant' && last.tool_calls)
      messages[messages.length - 1] = { ...last, tool_calls: [...last.tool_calls, ...m.tool_calls] };
    else messages.push(m);
  }
  return messages;
}

/** The id of a request's `conversation` (an id, or `{id}`). */
export const conversationIdOf = (c: string | { id: string } | null | undefined): string | null =>
  c === null || c === undefined ? null : typeof c === 'string' ? c : c.id;

/** One turn of a response: what the model is sent, this request's input items, and its conversation. */
export interface Turn {
  messages: ChatMessage[];
  /**
   * What a stored response keeps for a later `previous_response_id`: the messages, but in a conversation
   * only its own turn (the conversation's items are rows: no turn copies them all again).
   */
  kept: ChatMessage[];
  entries: ItemEntry[];
  conversationId: string | null;
}

/** The parts of a request a turn reads. */
export interface TurnRequest {
  instructions?: string | null;
  input?: string | unknown[] | null;
  previous_response_id?: string | null;
  conversation?: string | { id: string } | null;
}

/** Reads a request's input, after its previous response's conversation or its conversation's items. */
export async function prepareTurn(ctx: Ctx, projectId: string, body: TurnRequest): Promise<Turn> {
  const conversationId = conversationIdOf(body.conversation);
  if (conversationId && body.previous_response_id)
    throw invalid(`'previous_response_id' cannot be used together with 'conversation'.`, 'conversation', 'invalid_value');
  let context: ChatMessage[] = [];
  if (body.previous_response_id) {
    const previous = await store.conversationOf(ctx.store.db, projectId, body.previous_response_id);
    if (!previous) throw notFound('response', body.previous_response_id, 'previous_response_id');
    context = previous.filter((m) => m.role !== 'developer' && m.role !== 'system');
  }
  if (conversationId) {
    const items = await ctx.services.conversations?.context(ctx.store.db, projectId, conversationId);
    if (!items) throw notFound('conversation', conversationId, 'conversation');
    context = items;
  }
  const entries = await readInput(ctx, projectId, body.input, 'input');
  const input = entries.map((e) => e.message);
  const messages = assemble(body.instructions, context, input);
  return { messages, kept: conversationId ? assemble(body.instructions, [], input) : messages, entries, conversationId };
}

/** The parts of a response its items are recorded from. */
interface Recorded {
  id: string;
  status: string;
  store: boolean;
  output: ItemResource[];
}

/**
 * Records a response's items in `exec`'s transaction: its input when it is stored (`entries`, known at
 * create), its output once it has ended; and a finished turn (completed or incomplete) is appended to its
 * conversation, input then output.
 */
export async function recordTurn(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  response: Recorded,
  turn: { entries?: ItemEntry[]; conversationId: string | null },
): Promise<void> {
  if (turn.entries && response.store) await itemsStore.insertItems(exec, response.id, projectId, 'input', turn.entries);
  if (response.status === 'queued' || response.status === 'in_progress') return;
  const output = response.output.map(outputEntry);
  if (response.store) await itemsStore.insertItems(exec, response.id, projectId, 'output', output);
  if (turn.conversationId && (response.status === 'completed' || response.status === 'incomplete')) {
    const input = turn.entries ?? (await itemsStore.entries(exec, response.id, 'input'));
    await ctx.services.conversations?.append(exec, projectId, turn.conversationId, [...input, ...output]);
  }
}

/**
 * The text of `input` the rate limiter estimates tokens from: the items as JSON, with the bytes of data
 * URLs and `file_data` left out (a model is charged for what it reads of an image or a file, not for
 * its base64; the response's usage then reports what it read).
 */
export function admissionText(input: string | unknown[] | null | undefined): string {
  if (typeof input === 'string') return input;
  return JSON.stringify(input ?? '', (key, v: unknown) =>
    typeof v === 'string' && (key === 'file_data' || ((key === 'image_url' || key === 'file_url') && v.startsWith('data:'))) ? '' : v,
  );
}
