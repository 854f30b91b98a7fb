import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { Exec } from '../../store/db.js';
import * as store from './store.js';

export interface StoredFile {
  fileId: string;
  fileName: string;
  mimeType: string;
  size: number;
  /** Saved into the user's file library (offered by selectFiles). */
  library: boolean;
}

export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const MAX_TOTAL_BYTES = 200 * 1024 * 1024;
/** How long a download URL stays valid. */
export const DOWNLOAD_TTL_MS = 15 * 60 * 1000;

const view = (r: store.FileRow): StoredFile => ({
  fileId: r.id,
  fileName: r.file_name,
  mimeType: r.mime_type,
  size: r.size,
  library: r.library === 1,
});

/**
 * Files uploaded through the host (component uploads, file inputs of the arguments form), kept in the store
 * so that any instance serves them, with temporary signed download URLs (the signing key is shared through
 * the store too). Oldest files go first when the total passes 200 MB.
 */
export class FileStore {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly db: () => Exec,
  ) {}

  /** Stores bytes; returns the file's record. */
  async put(bytes: Buffer, fileName: string, mimeType: string, library: boolean): Promise<StoredFile> {
    const row: store.FileRow = {
      id: `file_${randomBytes(12).toString('hex')}`,
      file_name: fileName || 'file',
      mime_type: mimeType || 'application/octet-stream',
      size: bytes.length,
      library: library ? 1 : 0,
      created_at: this.clock.now(),
    };
    await store.insertFile(this.db(), row, bytes);
    const sizes = await store.fileSizes(this.db());
    let total = sizes.reduce((n, f) => n + f.size, 0);
    const drop: string[] = [];
    for (const f of sizes) {
      if (total <= MAX_TOTAL_BYTES || f.id === row.id) break;
      drop.push(f.id);
      total -= f.size;
    }
    await store.deleteFiles(this.db(), drop);
    return view(row);
  }

  async get(fileId: string): Promise<StoredFile | undefined> {
    const row = await store.getFile(this.db(), fileId);
    return row && view(row);
  }

  /** A file's bytes. */
  bytes(fileId: string): Promise<Buffer | undefined> {
    return store.fileBytes(this.db(), fileId);
  }

  /** Files saved to the library, newest first. */
  async library(): Promise<StoredFile[]> {
    return (await store.libraryFiles(this.db())).map(view);
  }

  /** A temporary download URL under `base` (Standin's public URL). */
  async downloadUrl(base: string, fileId: string): Promise<string> {
    const expires = Math.floor((this.clock.now() + DOWNLOAD_TTL_MS) / 1000);
    return `${base}/apps/files/${fileId}?expires=${expires}&sig=${await this.sign(fileId, expires)}`;
  }

  /** Checks a download URL's signature and expiry; returns the file or why not. */
  async check(fileId: string, expires: string | undefined, sig: string | undefined): Promise<StoredFile | 'expired' | 'invalid'> {
    const exp = Number(expires);
    if (!Number.isInteger(exp) || typeof sig !== 'string') return 'invalid';
    const want = Buffer.from(await this.sign(fileId, exp));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
    if (exp * 1000 < this.clock.now()) return 'expired';
    return (await this.get(fileId)) ?? 'invalid';
  }

  /** Reads the signing key again at the next use (after a reset emptied the store). */
  forgetKey(): void {
    this.key = undefined;
  }

  private async sign(fileId: string, expires: number): Promise<string> {
    // One key for every instance: a URL signed by one is checked by another.
    this.key ??= store
      .sharedKey(this.db(), 'download_urls', () => randomBytes(32).toString('base64url'))
      .then((v) => Buffer.from(v, 'base64url'))
      .catch((err: unknown) => {
        this.key = undefined;
        throw err;
      });
    return createHmac('sha256', await this.key)
      .update(`${fileId}.${expires}`)
      .digest('base64url');
  }
}
