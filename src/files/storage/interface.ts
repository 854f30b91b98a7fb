import type { Readable } from 'node:stream';
import type { Exec } from '../../store/db.js';

/**
 * What either storage takes as a file's name: letters, digits, `_` and `-` (Standin's ids are such). A row
 * from a snapshot, a job's payload or any caller cannot point a storage at another name: both refuse the
 * same names, so they answer alike.
 */
const STORED_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;

/** `id`, when a storage may keep bytes under it; else an error naming it. */
export function storedName(id: string): string {
  if (typeof id !== 'string' || !STORED_NAME.test(id))
    throw new Error(`'${String(id).slice(0, 200)}' is not a name file storage keeps bytes under`);
  return id;
}

/**
 * Where the bytes of uploaded files live. Two implementations: `fs.ts` (the data folder, with SQLite) and
 * `db.ts` (parts in the database, with PostgreSQL, so every instance reads what any instance stored).
 * A file's row (service.ts) is what makes its bytes visible; storage only keeps them.
 */
export interface FileStorage {
  readonly kind: 'fs' | 'db';
  /** Streams `source` in under `id`, never holding it whole; resolves with the byte count. A failed write leaves nothing behind. */
  write(id: string, source: AsyncIterable<Buffer>): Promise<number>;
  /**
   * The bytes of a stored file as a stream (opened before it resolves, so a missing file throws here).
   * `bytes`: the file's size as its row says, where the caller read it: the stream ends there without
   * asking the store for more (in the database, one statement less for a file of one part).
   */
  open(id: string, bytes?: number): Promise<Readable>;
  /** Where the bytes of `id` are on this machine's disk, for a reader in another process (fs.ts only). */
  localPath?(id: string): string;
  /** Frees the bytes, and any leftover of a write cut off by a crash; no error when there are none. `exec`: the transaction deleting the row, where the storage is the database. */
  remove(id: string, exec?: Exec): Promise<void>;
  /** Forgets every stored file (the control plane's reset). */
  clear(): Promise<void>;
}
