import type { Filter } from './filters.js';
import type { Candidate, ChunkPage, FileMeta } from './index-core.js';
import type { SavedIdentity } from './index-file.js';
import type { SourceLocation } from './search-source.js';

/**
 * Where and when the worker saves a store's index (index-file.ts): the folder, the file's owner, the
 * version the index is at after this load and what that version's change logged, the live chunks from
 * which it saves, the largest file it writes or reads.
 */
export interface SaveTo {
  dir: string;
  who: SavedIdentity;
  version: number;
  fingerprint: string;
  from: number;
  maxBytes: number;
}

/** The messages between the server's thread (index-cache.ts) and the search worker (search-worker.ts). */
export type WorkerRequest = { id: number } & (
  | { op: 'reset' | 'drop'; store: string }
  | { op: 'clear' }
  | {
      /** Makes the store's index from its saved file, if one passes every check (`restored` says so). */
      op: 'restore';
      store: string;
      dir: string;
      who: SavedIdentity;
      maxBytes: number;
    }
  | { op: 'sweep'; dir: string; sourceLocation: SourceLocation; source: string }
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
      save?: SaveTo;
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
  /** A restore: the version and fingerprint of the saved index now held, or why there is none. */
  restored?: { version: number; fingerprint: string } | { refused: string };
  error?: string;
}
