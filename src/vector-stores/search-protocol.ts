import type { Filter } from './filters.js';
import type { Candidate, ChunkPage, FileMeta } from './index-core.js';
import type { SourceLocation } from './search-source.js';

/** The messages between the server's thread (index-cache.ts) and the search worker (search-worker.ts). */
export type WorkerRequest = { id: number } & (
  | { op: 'reset' | 'drop'; store: string }
  | { op: 'clear' }
  | { op: 'files'; store: string; remove: string[]; set: FileMeta[] }
  | { op: 'chunks'; store: string; page: ChunkPage }
  | {
      /**
       * The worker reads the rows itself, over its own connection to `source`: the store whole (`full`,
       * its index made anew), or the files changed (`fileIds`: removed, then read again if still completed).
       */
      op: 'load';
      store: string;
      source: SourceLocation;
      embedder: string;
      full: boolean;
      fileIds?: string[];
    }
  | {
      op: 'search';
      stores: string[];
      queries: { vector: Float32Array | null; text: string }[];
      options: { ranker: string; filter?: Filter; max: number; threshold: number };
    }
);

/** `bytes`: what the store's index holds after the change; `pages`: chunk pages a load read. */
export interface WorkerReply {
  id: number;
  bytes: number;
  pages?: number;
  hits?: (Candidate & { store: number })[];
  error?: string;
}
