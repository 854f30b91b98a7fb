import type { Updateable } from 'kysely';
import { invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Ctx } from '../../core/module.js';
import { toJson, type Tx } from '../../store/db.js';
import { deleteVectorStoresIn, vectorStoresMadeFor } from '../../vector-stores/service.js';
import type { ThreadObject } from '../objects.js';
import { runtime } from '../runs/runtime.js';
import type { CreateThreadRequest, ModifyThreadRequest } from '../schemas.js';
import { insertMessages } from '../store/messages.js';
import * as store from '../store/threads.js';
import {
  checkMessage,
  checkMetadata,
  checkToolResources,
  type MessageInput,
  type MetadataInput,
  type ToolResourcesInput,
} from '../validate.js';
import { threadView } from '../views.js';
import { messageRow } from './messages.js';
import { attachToThread, checkInterpreterAttachments, checkInterpreterResources, resolveToolResources } from './resources.js';
import { write } from './write.js';

/** Threads: a conversation's messages, and the lock the run working on it holds. */

/** A thread to create, once checked. */
export interface ThreadInput {
  messages?: MessageInput[] | null;
  tool_resources?: ToolResourcesInput | null;
  metadata?: MetadataInput;
}

/** Checks a thread to create (`param`: where it sits in the request, `thread` for create-and-run). */
export function checkThreadBody(
  body: { messages?: unknown; tool_resources?: unknown; metadata?: unknown },
  param = '',
): asserts body is ThreadInput {
  const at = (k: string) => (param ? `${param}.${k}` : k);
  if (body.messages !== undefined && body.messages !== null) {
    if (!Array.isArray(body.messages))
      throw invalid(`Invalid type for '${at('messages')}': expected an array.`, at('messages'), 'invalid_type');
    body.messages.forEach((m: unknown, i: number) => checkMessage(m, `${at('messages')}[${i}]`));
  }
  checkToolResources(body.tool_resources, at('tool_resources'));
  checkMetadata(body.metadata, at('metadata'));
}

/**
 * Inserts a thread with its first messages; `fallbackToolResources` when the thread gives none
 * (create-and-run). Its vector stores are checked or made (the helper; the messages' file_search
 * attachments). `param`: where the thread sits in the request (`thread` for create-and-run).
 */
export async function insertThread(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  body: ThreadInput,
  fallbackToolResources?: ToolResourcesInput | null,
  param = '',
): Promise<store.ThreadRow> {
  const at = (k: string) => (param ? `${param}.${k}` : k);
  const id = newId('thread', ctx.clock);
  const own = body.tool_resources !== undefined && body.tool_resources !== null;
  const given = own ? body.tool_resources : fallbackToolResources;
  let resources = await resolveToolResources(
    ctx,
    tx,
    projectId,
    given,
    { kind: 'thread', id },
    own ? at('tool_resources') : 'tool_resources',
  );
  const messages = (body.messages ?? []).map((m, i) => ({ attachments: m.attachments, param: `${at('messages')}[${i}]` }));
  checkInterpreterAttachments(resources?.code_interpreter?.file_ids ?? [], messages);
  const attached = await attachToThread(ctx, tx, projectId, { id, tool_resources: toJson(resources) }, messages);
  if (attached) resources = attached;
  const row: store.ThreadRow = {
    id,
    project_id: projectId,
    created_at: ctx.clock.nowSeconds(),
    metadata: toJson(body.metadata),
    tool_resources: toJson(resources),
    active_run_id: null,
  };
  await store.insertThread(tx, row);
  await insertMessages(
    tx,
    (body.messages ?? []).map((m) => messageRow(ctx, projectId, row.id, m)),
  );
  return row;
}

export async function createThread(ctx: Ctx, projectId: string, body: CreateThreadRequest): Promise<ThreadObject> {
  checkThreadBody(body);
  const row = await ctx.store.db.transaction().execute((tx) => insertThread(ctx, tx, projectId, body));
  return threadView(row);
}

export async function getThread(ctx: Ctx, projectId: string, id: string): Promise<ThreadObject> {
  const row = await store.getThread(ctx.store.db, projectId, id);
  if (!row) throw notFound('thread', id);
  return threadView(row);
}

export async function modifyThread(ctx: Ctx, projectId: string, id: string, body: ModifyThreadRequest): Promise<ThreadObject> {
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  checkMetadata(body.metadata);
  const set: Updateable<store.ThreadRow> = {};
  if (body.metadata !== undefined) set.metadata = toJson(body.metadata);
  const toolResources = body.tool_resources;
  if (toolResources !== undefined) {
    if (!(await store.getThread(ctx.store.db, projectId, id))) throw notFound('thread', id);
    // No helper here (checked above): only the ids are checked.
    const ciFiles = toolResources?.code_interpreter?.file_ids;
    if (ciFiles) await checkInterpreterResources(ctx.store.db, id, ciFiles, 'tool_resources.code_interpreter.file_ids');
    set.tool_resources = toJson(
      await ctx.store.db.transaction().execute((tx) => resolveToolResources(ctx, tx, projectId, toolResources, { kind: 'thread', id })),
    );
  }
  const row = Object.keys(set).length
    ? await store.updateThread(ctx.store.db, projectId, id, set)
    : await store.getThread(ctx.store.db, projectId, id);
  if (!row) throw notFound('thread', id);
  return threadView(row);
}

/**
 * Deletes the thread with its messages, runs and steps, and the vector stores Standin made for it (the
 * helper's, its attachments') that no other thread or assistant names; runs executing here stop; its
 * code_interpreter session closes.
 */
export async function deleteThread(ctx: Ctx, projectId: string, id: string) {
  const runIds = await write(ctx, async (tx) => {
    if (!(await store.getThread(tx, projectId, id))) throw notFound('thread', id);
    const made = await vectorStoresMadeFor(tx, projectId, id);
    const kept = made.length ? await store.storesNamedElsewhere(tx, projectId, id, made) : new Set<string>();
    await deleteVectorStoresIn(
      tx,
      projectId,
      made.filter((s) => !kept.has(s)),
    );
    return store.deleteThreadRows(tx, id);
  });
  for (const r of runIds) runtime(ctx).engine.interrupt(r);
  // The thread's Python session (code_interpreter) goes with it; it would expire on its own otherwise.
  await ctx.services.codeInterpreter
    ?.closeSession(id)
    .catch((err: unknown) => ctx.log.warn({ err, thread: id }, 'closing the code interpreter session failed'));
  return { id, object: 'thread.deleted' as const, deleted: true };
}
