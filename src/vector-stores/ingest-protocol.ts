import type { Prepared, PrepareRequest, Refusal } from './prepare.js';

/** The messages between the server (ingest-pool.ts) and an ingestion process (ingest-child.ts). */
export type ChildRequest = { id: number } & PrepareRequest;
export type ChildReply = { id: number; rss: number } & ({ ok: true; prepared: Prepared } | { ok: false; refusal: Refusal });

/** What an ingestion process writes to stderr before it kills itself past the memory limit. */
export const MEMORY_MARK = 'standin-ingest: memory limit';
