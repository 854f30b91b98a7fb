import { invalid, notFound } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import { fromJson, type Exec, type Tx } from '../../store/db.js';
import { addFilesIn, createVectorStoreIn, existingVectorStoreIds } from '../../vector-stores/service.js';
import type { Attachment, ToolResources } from '../objects.js';
import { interpreterAttachments } from '../store/messages.js';
import type { ToolResourcesInput } from '../validate.js';

/**
 * The vector stores of assistants and threads (tool_resources.file_search): ids must name stores of the
 * project; the `vector_stores` helper creates its store; a message's file_search attachments join its
 * thread's store, or make one. Stores made for a thread expire 7 days after their last activity, the
 * platform's default for stores created by thread helpers, and go with the thread when it is deleted; an
 * assistant's helper store does not expire.
 */
export const THREAD_STORE_EXPIRY = { anchor: 'last_active_at', days: 7 } as const;

/** Whose resources these are: an assistant, or the thread with this id (the owner of stores made for it). */
type Owner = { kind: 'assistant' } | { kind: 'thread'; id: string };

/**
 * tool_resources to store, in the caller's transaction: every `vector_store_ids` entry must be a store of
 * the project (else 404, `param` naming it); the helper becomes a new store of its files.
 */
export async function resolveToolResources(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  tr: ToolResourcesInput | null | undefined,
  owner: Owner,
  param = 'tool_resources',
): Promise<ToolResources | null> {
  if (tr === undefined || tr === null) return null;
  const out: ToolResources = {};
  if (tr.code_interpreter) out.code_interpreter = { file_ids: tr.code_interpreter.file_ids ?? [] };
  if (tr.file_search) {
    const ids = tr.file_search.vector_store_ids;
    if (ids) await checkStoreIds(tx, projectId, ids, `${param}.file_search.vector_store_ids`);
    const made: string[] = [];
    for (const vs of tr.file_search.vector_stores ?? []) {
      const store = await createVectorStoreIn(
        ctx,
        tx,
        projectId,
        {
          name: owner.kind === 'thread' ? `Vector store for ${owner.id}` : '',
          ...(vs.file_ids ? { file_ids: vs.file_ids } : {}),
          ...(vs.chunking_strategy ? { chunking_strategy: vs.chunking_strategy } : {}),
          ...(vs.metadata ? { metadata: vs.metadata } : {}),
          ...(owner.kind === 'thread' ? { expires_after: THREAD_STORE_EXPIRY } : {}),
        },
        owner.kind === 'thread' ? { madeForThread: owner.id } : {},
      );
      made.push(store.id);
    }
    out.file_search = { vector_store_ids: ids ?? made };
  }
  return out;
}

/** 404 for the first id that is not a vector store of the project. */
export async function checkStoreIds(exec: Exec, projectId: string, ids: readonly string[], param: string): Promise<void> {
  const found = await existingVectorStoreIds(exec, projectId, ids);
  ids.forEach((id, i) => {
    if (!found.has(id)) throw notFound('vector store', id, `${param}[${i}]`);
  });
}

/**
 * Adds the files of messages' file_search attachments to the thread's vector store, creating the store
 * (7-day expiry) when the thread has none. `messages` carry where each sits in the request (`param`).
 * Returns the thread's new tool_resources when a store was created, else null.
 */
export async function attachToThread(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  thread: { id: string; tool_resources: string | null },
  messages: readonly { attachments?: Attachment[] | null; param: string }[],
): Promise<ToolResources | null> {
  const files: { fileId: string; param: string }[] = [];
  const seen = new Set<string>();
  for (const m of messages) {
    (m.attachments ?? []).forEach((a, j) => {
      if (!a.tools.some((t) => t.type === 'file_search') || seen.has(a.file_id)) return;
      seen.add(a.file_id);
      files.push({ fileId: a.file_id, param: `${m.param ? `${m.param}.` : ''}attachments[${j}].file_id` });
    });
  }
  if (!files.length) return null;
  const resources = fromJson<ToolResources>(thread.tool_resources) ?? {};
  const current = resources.file_search?.vector_store_ids?.[0];
  if (current) {
    await addFilesIn(ctx, tx, projectId, current, files);
    return null;
  }
  const store = await createVectorStoreIn(
    ctx,
    tx,
    projectId,
    { name: `Vector store for ${thread.id}`, expires_after: THREAD_STORE_EXPIRY },
    { madeForThread: thread.id },
  );
  await addFilesIn(ctx, tx, projectId, store.id, files);
  return { ...resources, file_search: { vector_store_ids: [store.id] } };
}

/** The most code_interpreter files a thread (tool_resources and attachments together) or an assistant has. */
export const MAX_INTERPRETER_FILES = 20;

/** The files of attachments that give them to code_interpreter, in order, each once. */
export function interpreterAttachmentIds(attachments: readonly (Attachment[] | null | undefined)[]): string[] {
  const ids = new Set<string>();
  for (const list of attachments) for (const a of list ?? []) if (a.tools.some((t) => t.type === 'code_interpreter')) ids.add(a.file_id);
  return [...ids];
}

/** A thread's code_interpreter files: `tool_resources.code_interpreter.file_ids`, then its messages' code_interpreter attachments (each once). */
export async function threadInterpreterFiles(exec: Exec, thread: { id: string; tool_resources: string | null }): Promise<string[]> {
  const own = fromJson<ToolResources>(thread.tool_resources)?.code_interpreter?.file_ids ?? [];
  const rows = await interpreterAttachments(exec, thread.id);
  return [...new Set([...own, ...interpreterAttachmentIds(rows.map((r) => fromJson<Attachment[]>(r.attachments)))])];
}

const tooMany = (param: string, count: number) =>
  invalid(
    `Invalid '${param}': a thread can have at most ${MAX_INTERPRETER_FILES} code_interpreter files ` +
      `(tool_resources.code_interpreter.file_ids and code_interpreter attachments together); this makes ${count}.`,
    param,
    'array_above_max_length',
  );

/**
 * Refuses (400, `param` naming the entry) messages whose code_interpreter attachments would bring a thread
 * holding `current` files past 20. `messages` carry where each sits in the request (`param`).
 */
export function checkInterpreterAttachments(
  current: readonly string[],
  messages: readonly { attachments?: Attachment[] | null; param: string }[],
): void {
  const ids = new Set(current);
  for (const m of messages) {
    (m.attachments ?? []).forEach((a, j) => {
      if (!a.tools.some((t) => t.type === 'code_interpreter') || ids.has(a.file_id)) return;
      ids.add(a.file_id);
      if (ids.size > MAX_INTERPRETER_FILES) throw tooMany(`${m.param ? `${m.param}.` : ''}attachments[${j}].file_id`, ids.size);
    });
  }
}

/** Refuses (400) new `tool_resources.code_interpreter.file_ids` of a thread that, with its attachments' files, would be more than 20. */
export async function checkInterpreterResources(exec: Exec, threadId: string, fileIds: readonly string[], param: string): Promise<void> {
  const rows = await interpreterAttachments(exec, threadId);
  const all = new Set([...fileIds, ...interpreterAttachmentIds(rows.map((r) => fromJson<Attachment[]>(r.attachments)))]);
  if (all.size > MAX_INTERPRETER_FILES) throw tooMany(param, all.size);
}
