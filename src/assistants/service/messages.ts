import { invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Ctx } from '../../core/module.js';
import { toJson, type Tx } from '../../store/db.js';
import type { Attachment, MessageContent, MessageObject } from '../objects.js';
import type { CreateMessageRequest, ListMessagesParams, ModifyRequest } from '../schemas.js';
import * as store from '../store/messages.js';
import { getThread, updateThread, type ThreadRow } from '../store/threads.js';
import { checkMessage, checkMetadata, type ContentInput, type MessageInput } from '../validate.js';
import { messageView } from '../views.js';
import { lockThread } from './lock.js';
import { attachToThread, checkInterpreterAttachments, threadInterpreterFiles } from './resources.js';
import { write } from './write.js';

/** Messages of a thread: created by users (or as earlier assistant turns), or written by runs. */

/** The row of a message to create, completed at once. */
export function messageRow(ctx: Pick<Ctx, 'clock'>, projectId: string, threadId: string, m: MessageInput): store.MessageRow {
  const now = ctx.clock.nowSeconds();
  const content: MessageContent[] =
    typeof m.content === 'string' ? [{ type: 'text', text: { value: m.content, annotations: [] } }] : m.content.map(toStoredBlock);
  return {
    id: newId('msg', ctx.clock),
    project_id: projectId,
    thread_id: threadId,
    created_at: now,
    role: m.role,
    content: JSON.stringify(content),
    attachments: toJson(m.attachments ?? []),
    metadata: toJson(m.metadata),
    assistant_id: null,
    run_id: null,
    status: 'completed',
    completed_at: now,
    incomplete_at: null,
    incomplete_details: null,
  };
}

/** Input blocks → message content blocks (`{type: text, text}` becomes `{text: {value, annotations}}`; image detail defaults to auto). */
function toStoredBlock(b: ContentInput): MessageContent {
  if (b.type === 'text') return { type: 'text', text: { value: b.text, annotations: [] } };
  if (b.type === 'image_file')
    return { type: 'image_file', image_file: { file_id: b.image_file.file_id, detail: b.image_file.detail ?? 'auto' } };
  return { type: 'image_url', image_url: { url: b.image_url.url, detail: b.image_url.detail ?? 'auto' } };
}

/**
 * A message's file_search attachments join the thread's vector store (made for it when it has none); its
 * code_interpreter attachments may not bring the thread past 20 code_interpreter files.
 */
export async function attachFiles(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  thread: ThreadRow,
  messages: readonly { attachments?: Attachment[] | null; param: string }[],
): Promise<void> {
  checkInterpreterAttachments(await threadInterpreterFiles(tx, thread), messages);
  const resources = await attachToThread(ctx, tx, projectId, thread, messages);
  if (resources) await updateThread(tx, projectId, thread.id, { tool_resources: toJson(resources) });
}

const lockError = (threadId: string, runId: string) =>
  invalid(`Can't add messages to ${threadId} while a run ${runId} is active.`, null, null);

async function threadExists(ctx: Ctx, projectId: string, threadId: string): Promise<void> {
  if (!(await getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
}

export async function createMessage(ctx: Ctx, projectId: string, threadId: string, body: CreateMessageRequest): Promise<MessageObject> {
  checkMessage(body, '');
  return write(ctx, async (tx, fx) => {
    const thread = await lockThread(ctx, tx, projectId, threadId, fx, lockError);
    const row = messageRow(ctx, projectId, threadId, body);
    // Before the insert: the attachments are counted against the thread's files so far.
    await attachFiles(ctx, tx, projectId, thread, [{ attachments: body.attachments, param: '' }]);
    await store.insertMessages(tx, [row]);
    return messageView(row);
  });
}

export async function listMessages(ctx: Ctx, projectId: string, threadId: string, { run_id, ...page }: ListMessagesParams) {
  await threadExists(ctx, projectId, threadId);
  return store.pageMessages(ctx.store.db, projectId, threadId, run_id, page, messageView);
}

export async function getMessage(ctx: Ctx, projectId: string, threadId: string, id: string): Promise<MessageObject> {
  await threadExists(ctx, projectId, threadId);
  const row = await store.getMessage(ctx.store.db, projectId, threadId, id);
  if (!row) throw notFound('message', id);
  return messageView(row);
}

export async function modifyMessage(
  ctx: Ctx,
  projectId: string,
  threadId: string,
  id: string,
  body: ModifyRequest,
): Promise<MessageObject> {
  checkMetadata(body.metadata);
  await threadExists(ctx, projectId, threadId);
  const row =
    body.metadata !== undefined
      ? await store.setMessageMetadata(ctx.store.db, projectId, threadId, id, body.metadata)
      : await store.getMessage(ctx.store.db, projectId, threadId, id);
  if (!row) throw notFound('message', id);
  return messageView(row);
}

export async function deleteMessage(ctx: Ctx, projectId: string, threadId: string, id: string) {
  await threadExists(ctx, projectId, threadId);
  if (!(await store.deleteMessage(ctx.store.db, projectId, threadId, id))) throw notFound('message', id);
  return { id, object: 'thread.message.deleted' as const, deleted: true };
}
