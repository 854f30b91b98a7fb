import type { Ctx } from '../../core/module.js';
import { fromJson } from '../../store/db.js';
import { existingVectorStoreIds, getVectorStore, searchVectorStores } from '../../vector-stores/service.js';
import type { ToolResources } from '../objects.js';
import { getAssistant } from '../store/assistants.js';
import type { RunRow } from '../store/runs.js';
import { getThread } from '../store/threads.js';
import { queryOf } from '../../models/service.js';
import type { FileSearchCall, StoredFileSearchCall } from './search-calls.js';

/**
 * file_search executed by Standin inside a run: the vector stores of the run's assistant and thread
 * (tool_resources) are searched with the tool's settings (vector-stores/service.ts), and the results are
 * kept in the run's tool_calls step.
 */

/** The platform waits at most this long for the thread's store to finish ingesting before a run searches it. */
const INGESTION_WAIT_MS = 60_000;
const INGESTION_POLL_MS = 50;

/** The ranker a step shows: `auto` is the current ranker (as the platform reports it). */
const RANKER = 'default_2024_08_21';

/** The stores a run searches: its thread's, then its assistant's (tool_resources), leaving out stores deleted since. */
export async function runStores(
  ctx: Ctx,
  run: Pick<RunRow, 'project_id' | 'assistant_id' | 'thread_id'>,
): Promise<{ ids: string[]; threadStore?: string }> {
  const db = ctx.store.db;
  const [thread, assistant] = await Promise.all([
    getThread(db, run.project_id, run.thread_id),
    getAssistant(db, run.project_id, run.assistant_id),
  ]);
  const threadIds = fromJson<ToolResources>(thread?.tool_resources ?? null)?.file_search?.vector_store_ids ?? [];
  const assistantIds = fromJson<ToolResources>(assistant?.tool_resources ?? null)?.file_search?.vector_store_ids ?? [];
  const wanted = [...new Set([...threadIds, ...assistantIds])];
  const existing = await existingVectorStoreIds(db, run.project_id, wanted);
  const ids = wanted.filter((id) => existing.has(id));
  return { ids, threadStore: threadIds.find((id) => existing.has(id)) };
}

/** Waits while the thread's store still ingests files, at most 60 s (wall time); the assistant's stores are not waited for. */
async function awaitIngestion(ctx: Ctx, projectId: string, storeId: string, signal: AbortSignal): Promise<void> {
  for (let waited = 0; waited < INGESTION_WAIT_MS; waited += INGESTION_POLL_MS) {
    const store = await getVectorStore(ctx, projectId, storeId).catch(() => undefined);
    if (!store || store.status !== 'in_progress') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, INGESTION_POLL_MS);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * Executes a turn's file searches over the run's stores, each with the model's query and the tool's
 * settings. Returns each call's `file_search` member (ranking options, results with their content).
 * A store that cannot be searched (expired) throws: the run fails with its message.
 */
export async function runSearches(
  ctx: Ctx,
  run: Pick<RunRow, 'project_id'>,
  stores: { ids: string[]; threadStore?: string },
  calls: readonly StoredFileSearchCall[],
  settings: { max_num_results?: number; ranking_options?: { ranker?: string; score_threshold: number } },
  signal: AbortSignal,
): Promise<Map<string, FileSearchCall['file_search']>> {
  if (stores.threadStore) await awaitIngestion(ctx, run.project_id, stores.threadStore, signal);
  const threshold = settings.ranking_options?.score_threshold ?? 0;
  const ranker = settings.ranking_options?.ranker;
  const out = new Map<string, FileSearchCall['file_search']>();
  for (const call of calls) {
    const hits = await searchVectorStores(ctx, run.project_id, stores.ids, queryOf(call.arguments), {
      maxNumResults: settings.max_num_results ?? 20,
      rankingOptions: { ranker: 'auto', score_threshold: threshold },
    });
    out.set(call.id, {
      ranking_options: { ranker: !ranker || ranker === 'auto' ? RANKER : ranker, score_threshold: threshold },
      results: hits.map((h) => ({ file_id: h.file_id, file_name: h.filename, score: h.score, content: [{ type: 'text', text: h.text }] })),
    });
  }
  return out;
}
