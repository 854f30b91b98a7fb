import { parentPort, workerData } from 'node:worker_threads';
import { words } from './lexical.js';
import { searchIndexes, StoreIndex } from './index-core.js';
import type { WorkerReply, WorkerRequest } from './search-protocol.js';

/**
 * The search worker (a thread started by index-cache.ts): holds this instance's store indexes and does
 * all the work on them — tokenizing added chunks, scoring, compaction — so none of it runs on the server's
 * thread. Messages are handled in order, one at a time.
 */
const indexes = new Map<string, StoreIndex>();
const approximateFrom = (workerData as { approximateFrom: number }).approximateFrom || Infinity;

function handle(req: WorkerRequest): WorkerReply {
  switch (req.op) {
    case 'reset':
      indexes.set(req.store, new StoreIndex(approximateFrom));
      return { id: req.id, bytes: 0 };
    case 'drop':
      indexes.delete(req.store);
      return { id: req.id, bytes: 0 };
    case 'clear':
      indexes.clear();
      return { id: req.id, bytes: 0 };
    case 'files': {
      const index = indexes.get(req.store);
      if (!index) return { id: req.id, bytes: 0 };
      index.removeFiles(req.remove);
      index.setFiles(req.set);
      return { id: req.id, bytes: index.bytes() };
    }
    case 'chunks': {
      const index = indexes.get(req.store);
      if (!index) return { id: req.id, bytes: 0 };
      index.addChunks(req.page);
      return { id: req.id, bytes: index.bytes() };
    }
    case 'search': {
      const queries = req.queries.map((q) => ({ vector: q.vector, words: words(q.text) }));
      const hits = searchIndexes(
        req.stores.map((s) => indexes.get(s)),
        queries,
        req.options,
      );
      return { id: req.id, bytes: 0, hits };
    }
  }
}

parentPort!.on('message', (req: WorkerRequest) => {
  try {
    parentPort!.postMessage(handle(req));
  } catch (err) {
    parentPort!.postMessage({ id: req.id, bytes: 0, error: (err as Error)?.stack ?? String(err) } satisfies WorkerReply);
  }
});
