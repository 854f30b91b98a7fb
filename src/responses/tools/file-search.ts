import { invalid, notFound } from '../../core/errors.js';
import { partChecker } from '../../core/validation.js';
import { citationMarkers, FILE_SEARCH_FUNCTION, formatFileSearchOutput, queryOf } from '../../models/service.js';
import { getVectorStore, parseFilter, searchVectorStores, type Filter } from '../../vector-stores/service.js';
import { itemId } from '../events.js';
import type { HostedItem } from '../input-schemas.js';
import type { HostedContext, HostedTool } from './hosted.js';
import { FileSearchEntrySchema, type FileSearchEntry } from './file-search-schemas.js';

/**
 * `file_search` on /v1/responses: the model is offered the function runs offer (models/file-search.ts);
 * each call searches the tool's vector stores with the one engine both interfaces use
 * (`searchVectorStores`: the tool's `filters` on file attributes, `max_num_results`, `ranking_options`),
 * writes a `file_search_call` item (`queries`; `results` with `include: ["file_search_call.results"]`)
 * and its `response.file_search_call.in_progress/searching/completed` events, and feeds the passages
 * back under markers `【m:i†source】`. The markers the answer copies become `file_citation` annotations.
 */

/** Results of a search when the tool leaves `max_num_results` out: the vector store search's default. */
const DEFAULT_RESULTS = 10;

/** A model's query is cut to the vector store search's bound (an upstream model's answer is not trusted). */
const MAX_QUERY_CHARS = 4096;

/** What the tool keeps over a response's rounds: its m-th search's files, for the citations. */
interface SearchState {
  searches: { file_id: string; filename: string }[][];
}

const checkEntry = partChecker<FileSearchEntry>(FileSearchEntrySchema);

const stateOf = (hctx: HostedContext): SearchState => {
  let s = hctx.state.get('file_search') as SearchState | undefined;
  if (!s) hctx.state.set('file_search', (s = { searches: [] }));
  return s;
};

const filtersOf = (entry: FileSearchEntry): Filter | undefined =>
  entry.filters === null || entry.filters === undefined ? undefined : (entry.filters as Filter);

export const fileSearchTool: HostedTool<FileSearchEntry> = {
  type: 'file_search',

  check(raw, at) {
    const entry = checkEntry(raw, `/${at.replace(/\[(\d+)\]/g, '/$1')}`);
    const filters = entry.filters === null || entry.filters === undefined ? null : parseFilter(entry.filters, `${at}.filters`);
    return {
      type: 'file_search',
      vector_store_ids: entry.vector_store_ids,
      filters,
      max_num_results: entry.max_num_results ?? DEFAULT_RESULTS,
      ranking_options: {
        ranker: entry.ranking_options?.ranker ?? 'auto',
        score_threshold: entry.ranking_options?.score_threshold ?? 0,
        ...(entry.ranking_options?.hybrid_search ? { hybrid_search: entry.ranking_options.hybrid_search } : {}),
      },
    };
  },

  checkRequest(entries) {
    if (entries.length > 1)
      throw invalid(
        `'tools' may hold one 'file_search' tool; list every vector store in its 'vector_store_ids'.`,
        'tools',
        'invalid_value',
      );
  },

  async checkAccess(entry, ctx, projectId, at) {
    for (const [i, id] of entry.vector_store_ids.entries()) {
      const param = `${at}.vector_store_ids[${i}]`;
      const store = await getVectorStore(ctx, projectId, id).catch(() => undefined);
      if (!store) throw notFound('vector store', id, param);
      if (store.status === 'expired') throw invalid(`The vector store ${id} has expired; create a new one.`, param, 'vector_store_expired');
    }
  },

  functions: () => [{ function: FILE_SEARCH_FUNCTION, role: 'retrieval' }],

  async call(entry, _name, args, hctx) {
    const { writer } = hctx;
    const query = queryOf(args).slice(0, MAX_QUERY_CHARS);
    const state = stateOf(hctx);
    const m = state.searches.length;
    const item: HostedItem = { id: itemId('fs'), type: 'file_search_call', status: 'in_progress', queries: [query], results: null };
    const index = writer.addItem(item);
    const at = { output_index: index, item_id: item.id };
    writer.event('response.file_search_call.in_progress', at);
    writer.updateItem(index, { status: 'searching' });
    writer.event('response.file_search_call.searching', at);
    const hits = await searchVectorStores(hctx.ctx, hctx.projectId, entry.vector_store_ids, query, {
      maxNumResults: entry.max_num_results,
      rankingOptions: { ranker: entry.ranking_options?.ranker, score_threshold: entry.ranking_options?.score_threshold },
      filters: filtersOf(entry),
    });
    state.searches.push(hits.map((h) => ({ file_id: h.file_id, filename: h.filename })));
    const results = hctx.include.has('file_search_call.results')
      ? hits.map((h) => ({ file_id: h.file_id, filename: h.filename, score: h.score, text: h.text, attributes: h.attributes ?? {} }))
      : null;
    writer.updateItem(index, { status: 'completed', results });
    writer.event('response.file_search_call.completed', at);
    writer.doneItem(index);
    return {
      output: formatFileSearchOutput(
        m,
        hits.map((h) => ({ fileName: h.filename, score: h.score, text: h.text })),
      ),
    };
  },

  annotate(text, hctx) {
    const searches = stateOf(hctx).searches;
    const out: Record<string, unknown>[] = [];
    for (const c of citationMarkers(text)) {
      const file = searches[c.m]?.[c.i];
      if (file) out.push({ type: 'file_citation', file_id: file.file_id, filename: file.filename, index: c.index });
    }
    return out;
  },
};
