import type { Filter } from './filters.js';
import type { Candidate, ChunkPage, FileMeta } from './index-core.js';

/** The messages between the server's thread (index-cache.ts) and the search worker (search-worker.ts). */
export type WorkerRequest = { id: number } & (
  | { op: 'reset' | 'drop'; store: string }
  | { op: 'clear' }
  | { op: 'files'; store: string; remove: string[]; set: FileMeta[] }
  | { op: 'chunks'; store: string; page: ChunkPage }
  | {
      op: 'search';
      stores: string[];
      queries: { vector: Float32Array | null; text: string }[];
      options: { ranker: string; filter?: Filter; max: number; threshold: number };
    }
);

/** `bytes`: what the store's index holds after the change. */
export interface WorkerReply {
  id: number;
  bytes: number;
  hits?: (Candidate & { store: number })[];
  error?: string;
}
