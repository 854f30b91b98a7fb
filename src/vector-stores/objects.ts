import { fromJson } from '../store/db.js';
import type { Chunking } from './chunk.js';
import type { Attributes } from './filters.js';
import type { BatchObject, StoreFileObject, VectorStoreObject } from './schemas.js';
import type { BatchRow, StoreFileRow, StoreRow } from './store.js';

/** Rows to the objects of the API, with the statuses that follow from the files and the clock. */
export interface Counts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

export const emptyCounts = (): Counts => ({ in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 });

/** When a store expires (Unix seconds), or null when it has no expiry policy. */
export function expiresAt(row: StoreRow): number | null {
  const policy = fromJson<{ days: number }>(row.expires_after);
  return policy ? Number(row.last_active_at) + policy.days * 86_400 : null;
}

export const isExpired = (row: StoreRow, nowSeconds: number) => {
  const at = expiresAt(row);
  return at !== null && at <= nowSeconds;
};

/** A store: `expired` past its expiry, `in_progress` while a file is being ingested, else `completed`. */
export function vectorStoreObject(row: StoreRow, counts: Counts, usageBytes: number, nowSeconds: number): VectorStoreObject {
  const expiresAfter = fromJson<{ anchor: 'last_active_at'; days: number }>(row.expires_after);
  return {
    id: row.id,
    object: 'vector_store',
    created_at: Number(row.created_at),
    name: row.name,
    description: row.description,
    usage_bytes: usageBytes,
    file_counts: counts,
    status: isExpired(row, nowSeconds) ? 'expired' : counts.in_progress > 0 ? 'in_progress' : 'completed',
    ...(expiresAfter ? { expires_after: expiresAfter } : {}),
    expires_at: expiresAt(row),
    last_active_at: Number(row.last_active_at),
    metadata: fromJson<Record<string, string>>(row.metadata),
  };
}

export function storeFileObject(row: StoreFileRow): StoreFileObject {
  return {
    id: row.file_id,
    object: 'vector_store.file',
    usage_bytes: Number(row.usage_bytes),
    created_at: Number(row.created_at),
    vector_store_id: row.vector_store_id,
    status: row.status,
    last_error: fromJson<StoreFileObject['last_error']>(row.last_error),
    chunking_strategy: { type: 'static', static: fromJson<Chunking>(row.chunking)! },
    attributes: fromJson<Attributes>(row.attributes),
  };
}

/**
 * A batch: `cancelled` once cancelled, `in_progress` while a file of it is, then `failed` when every
 * file failed, else `completed` (failed files are counted; the SDK's poll tells callers to check).
 */
export function batchObject(row: BatchRow, counts: Counts): BatchObject {
  const status =
    row.cancelled_at !== null
      ? 'cancelled'
      : counts.in_progress > 0
        ? 'in_progress'
        : counts.total > 0 && counts.failed === counts.total
          ? 'failed'
          : 'completed';
  return {
    id: row.id,
    object: 'vector_store.files_batch',
    created_at: Number(row.created_at),
    vector_store_id: row.vector_store_id,
    status,
    file_counts: counts,
  };
}

/** Adds rows of `{status, n}` into counts. */
export function addCounts(counts: Counts, status: string, n: number): Counts {
  if (status in counts && status !== 'total') counts[status as keyof Counts] += Number(n);
  counts.total += Number(n);
  return counts;
}
