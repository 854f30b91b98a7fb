import { ApiError, invalid, notFound } from '../../core/errors.js';
import { getFile } from '../../files/service.js';
import {
  CONTAINER_ID,
  containerFilePaths,
  createContainer,
  executeInContainer,
  getContainer,
  type ContainerExecution,
} from '../../containers/service.js';
import { codeOf, formatCodeOutput, interpreterFunction } from '../../models/service.js';
import { itemId } from '../events.js';
import type { HostedItem } from '../input-schemas.js';
import type { HostedToolEntry } from '../schemas.js';
import type { HostedContext, HostedTool } from './hosted.js';

/**
 * The `code_interpreter` tool of /v1/responses: the model's code runs in a container (containers/): the one
 * `container` names, or, for `{type: "auto"}`, one Standin creates for the response with the `file_ids`
 * copied in. Each call is a `code_interpreter_call` item (`code`, and its `outputs` — logs and images —
 * with `include: ["code_interpreter_call.outputs"]`), streamed as `response.code_interpreter_call.*` and
 * `response.code_interpreter_call_code.*` events; the files the code writes (a saved or shown chart
 * among them) become container files, cited as `container_file_citation` where the answer links them.
 */

const MEMORY_LIMITS = ['1g', '4g', '16g', '64g'] as const;
/** `container.file_ids` at most (AutoCodeInterpreterToolParam). */
const MAX_FILE_IDS = 50;
/** Characters of code per `response.code_interpreter_call_code.delta` event. */
const CODE_DELTA_CHARS = 64;
const INCLUDE_OUTPUTS = 'code_interpreter_call.outputs';
/** Container files named in the function's description, at most. */
const LISTED_FILES = 50;

type AutoContainer = { type: 'auto'; file_ids?: string[]; memory_limit?: (typeof MEMORY_LIMITS)[number] | null; network_policy?: unknown };
export type CodeInterpreterEntry = HostedToolEntry & { type: 'code_interpreter'; container: string | AutoContainer };

type Output = { type: 'logs'; logs: string } | { type: 'image'; url: string };

/** What the tool keeps over one response's rounds. */
interface State {
  /** The container of each entry (created for `auto` before the first model call). */
  containers: Map<CodeInterpreterEntry, { id: string; files: { path: string; filename: string }[] }>;
  /** The files the response's code wrote, by sandbox path (the last write wins): what the answer may cite. */
  written: Map<string, { container_id: string; file_id: string; filename: string }>;
}

const stateOf = (hctx: HostedContext): State => {
  let s = hctx.state.get('code_interpreter') as State | undefined;
  if (!s) hctx.state.set('code_interpreter', (s = { containers: new Map(), written: new Map() }));
  return s;
};

const unknownMember = (key: string, at: string) =>
  invalid(`Unrecognized request argument supplied: ${at}.${key}`, `${at}.${key}`, 'unknown_parameter');

function checkAuto(raw: Record<string, unknown>, at: string): AutoContainer {
  for (const key of Object.keys(raw))
    if (!['type', 'file_ids', 'memory_limit', 'network_policy'].includes(key)) throw unknownMember(key, at);
  if (raw.type !== 'auto')
    throw invalid(
      `Invalid value for '${at}.type': ${JSON.stringify(raw.type)}. Supported values are: 'auto'.`,
      `${at}.type`,
      'invalid_value',
    );
  const out: AutoContainer = { type: 'auto' };
  if (raw.file_ids !== undefined) {
    const ids = raw.file_ids;
    if (!Array.isArray(ids) || ids.length > MAX_FILE_IDS || ids.some((id) => typeof id !== 'string' || id.length > 256))
      throw invalid(`'${at}.file_ids' must be an array of at most ${MAX_FILE_IDS} file ids.`, `${at}.file_ids`, 'invalid_value');
    out.file_ids = ids as string[];
  }
  if (raw.memory_limit !== undefined && raw.memory_limit !== null) {
    if (!(MEMORY_LIMITS as readonly unknown[]).includes(raw.memory_limit))
      throw invalid(
        `Invalid value for '${at}.memory_limit': ${JSON.stringify(raw.memory_limit)}. Supported values are: ${MEMORY_LIMITS.map((m) => `'${m}'`).join(', ')}.`,
        `${at}.memory_limit`,
        'invalid_value',
      );
    out.memory_limit = raw.memory_limit as AutoContainer['memory_limit'];
  } else if (raw.memory_limit === null) out.memory_limit = null;
  if (raw.network_policy !== undefined) {
    const policy = raw.network_policy as { type?: unknown } | null;
    if (policy?.type !== 'disabled' || Object.keys(policy).length !== 1)
      throw invalid(
        `'${at}.network_policy' may only be {"type": "disabled"}: Standin's sandboxes have no network.`,
        `${at}.network_policy`,
        'unsupported_parameter',
      );
    out.network_policy = { type: 'disabled' };
  }
  return out;
}

/** The filename a path shows (its last segment). */
const filenameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Splits code into the pieces its delta events carry. */
const pieces = (code: string) =>
  Array.from({ length: Math.ceil(code.length / CODE_DELTA_CHARS) }, (_, i) => code.slice(i * CODE_DELTA_CHARS, (i + 1) * CODE_DELTA_CHARS));

export const codeInterpreterTool: HostedTool<CodeInterpreterEntry> = {
  type: 'code_interpreter',

  check(raw, at) {
    for (const key of Object.keys(raw)) if (!['type', 'container'].includes(key)) throw unknownMember(key, at);
    const container = raw.container;
    if (container === undefined)
      throw invalid(`Missing required parameter: '${at}.container'.`, `${at}.container`, 'missing_required_parameter');
    let entry: CodeInterpreterEntry;
    if (typeof container === 'string') {
      if (!CONTAINER_ID.test(container))
        throw invalid(
          `Invalid '${at}.container': '${container.slice(0, 100)}' is not a container id (cntr_…).`,
          `${at}.container`,
          'invalid_value',
        );
      entry = { type: 'code_interpreter', container };
    } else if (container !== null && typeof container === 'object' && !Array.isArray(container))
      entry = { type: 'code_interpreter', container: checkAuto(container as Record<string, unknown>, `${at}.container`) };
    else
      throw invalid(
        `Invalid type for '${at}.container': expected a container id or an object with type 'auto'.`,
        `${at}.container`,
        'invalid_type',
      );
    return entry;
  },

  checkRequest(entries) {
    if (entries.length > 1) throw invalid("'tools' may hold one code_interpreter tool.", 'tools', 'invalid_value');
  },

  async checkAccess(entry, ctx, projectId, at) {
    const param = `${at}.container`;
    if (typeof entry.container === 'string') {
      const id = entry.container;
      const c = await getContainer(ctx, projectId, id).catch(() => undefined);
      if (!c) throw notFound('container', id, param);
      if (c.status !== 'running')
        throw invalid(`Container ${id} has expired; create a new container or use {"type": "auto"}.`, param, 'container_expired');
      return;
    }
    for (const [i, id] of (entry.container.file_ids ?? []).entries())
      if (!(await getFile(ctx, projectId, id).catch(() => undefined))) throw notFound('file', id, `${param}.file_ids[${i}]`);
  },

  async prepare(entry, hctx) {
    const { ctx, projectId } = hctx;
    let id: string;
    if (typeof entry.container === 'string') id = entry.container;
    else {
      const auto = entry.container;
      const made = await createContainer(ctx, projectId, {
        name: 'code_interpreter (auto)',
        file_ids: auto.file_ids,
        ...(auto.memory_limit ? { memory_limit: auto.memory_limit } : {}),
      });
      id = made.id;
    }
    const files = (await containerFilePaths(ctx, projectId, id)).map((f) => ({ path: f.path, filename: filenameOf(f.path) }));
    stateOf(hctx).containers.set(entry, { id, files });
  },

  functions(entry, hctx) {
    const files = stateOf(hctx).containers.get(entry)?.files ?? [];
    // A container may hold a thousand files: the model is told of the first ones, and to list the folder for the rest.
    const told = files.slice(0, LISTED_FILES);
    const fn = interpreterFunction('code_interpreter', told);
    if (files.length > told.length)
      fn.description += ` ${files.length - told.length} more files are in /mnt/data/ (list the folder to see them).`;
    return [{ function: fn, role: 'interpreter' }];
  },

  async call(entry, _name, args, hctx) {
    const { ctx, projectId, writer } = hctx;
    const state = stateOf(hctx);
    const containerId = state.containers.get(entry)!.id;
    const code = codeOf(args);
    const item = {
      id: itemId('ci'),
      type: 'code_interpreter_call' as const,
      status: 'in_progress',
      container_id: containerId,
      code: '',
      outputs: null,
    };
    const index = writer.addItem(item);
    const at = { output_index: index, item_id: item.id };
    writer.event('response.code_interpreter_call.in_progress', at);
    for (const delta of pieces(code)) writer.event('response.code_interpreter_call_code.delta', { ...at, delta });
    writer.event('response.code_interpreter_call_code.done', { ...at, code });
    writer.updateItem(index, { code, status: 'interpreting' });
    writer.event('response.code_interpreter_call.interpreting', at);
    let run: ContainerExecution;
    try {
      run = await executeInContainer(ctx, projectId, containerId, code);
    } catch (err) {
      // The container went away or expired meanwhile: the call fails, the model is told, the response goes on.
      const message = err instanceof ApiError ? err.message : 'The code could not be run.';
      writer.updateItem(index, { status: 'failed', outputs: hctx.include.has(INCLUDE_OUTPUTS) ? [{ type: 'logs', logs: message }] : null });
      writer.doneItem(index);
      return { output: `Error: ${message}` };
    }
    const logs = [...run.notes, run.result.logs].filter(Boolean).join('\n');
    const outputs: Output[] = logs ? [{ type: 'logs', logs }] : [];
    for (const image of run.images)
      outputs.push({ type: 'image', url: `data:image/png;base64,${Buffer.from(image.bytes).toString('base64')}` });
    for (const f of [...run.files, ...run.images.map((i) => i.file)])
      state.written.set(f.path, { container_id: containerId, file_id: f.id, filename: filenameOf(f.path) });
    writer.updateItem(index, { status: 'completed', outputs: hctx.include.has(INCLUDE_OUTPUTS) ? outputs : null });
    writer.event('response.code_interpreter_call.completed', at);
    writer.doneItem(index);
    return { output: formatCodeOutput(logs, [...run.files.map((f) => f.path), ...run.images.map((i) => i.file.path)]) };
  },

  /** Each `sandbox:/mnt/data/…` link (or bare path) of a file the response's code wrote, as a container_file_citation. */
  annotate(text, hctx) {
    const out: Record<string, unknown>[] = [];
    for (const [path, f] of stateOf(hctx).written) {
      for (const target of [`sandbox:${path}`, path]) {
        let from = 0;
        for (let i = text.indexOf(target, from); i >= 0; i = text.indexOf(target, from)) {
          from = i + target.length;
          // A bare path inside a sandbox: link is the link's own.
          if (target === path && text.slice(Math.max(0, i - 8), i) === 'sandbox:') continue;
          out.push({
            type: 'container_file_citation',
            container_id: f.container_id,
            file_id: f.file_id,
            filename: f.filename,
            start_index: i,
            end_index: from,
          });
        }
      }
    }
    return out.sort((a, b) => (a.start_index as number) - (b.start_index as number));
  },

  inputItems: {
    code_interpreter_call: {
      check(raw, at): HostedItem {
        if (typeof raw.id !== 'string' || raw.id.length < 1 || raw.id.length > 200)
          throw invalid(`'${at}.id' must be the item's id (1 to 200 characters).`, `${at}.id`, 'invalid_value');
        if (typeof raw.container_id !== 'string' || raw.container_id.length > 256)
          throw invalid(`'${at}.container_id' must be the container's id.`, `${at}.container_id`, 'invalid_value');
        if (raw.code !== null && raw.code !== undefined && typeof raw.code !== 'string')
          throw invalid(`'${at}.code' must be a string or null.`, `${at}.code`, 'invalid_type');
        if (raw.outputs !== null && raw.outputs !== undefined && !Array.isArray(raw.outputs))
          throw invalid(`'${at}.outputs' must be an array or null.`, `${at}.outputs`, 'invalid_type');
        return raw as HostedItem;
      },
    },
  },
};
