import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';

export interface StoredFile {
  fileId: string;
  fileName: string;
  mimeType: string;
  size: number;
  /** Saved into the user's file library (offered by selectFiles). */
  library: boolean;
  bytes: Buffer;
}

export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const MAX_TOTAL_BYTES = 200 * 1024 * 1024;
/** How long a download URL stays valid. */
export const DOWNLOAD_TTL_MS = 15 * 60 * 1000;

/**
 * Files uploaded through the host (component uploads, file inputs of the arguments form), kept in memory with
 * temporary signed download URLs. Oldest files go first when the total passes 200 MB.
 */
export class FileStore {
  private files = new Map<string, StoredFile>();
  private total = 0;
  private key = randomBytes(32);

  constructor(private clock: Clock) {}

  /** Stores bytes; returns the file's record. */
  put(bytes: Buffer, fileName: string, mimeType: string, library: boolean): StoredFile {
    const fileId = `file_${randomBytes(12).toString('hex')}`;
    const f: StoredFile = {
      fileId,
      fileName: fileName || 'file',
      mimeType: mimeType || 'application/octet-stream',
      size: bytes.length,
      library,
      bytes,
    };
    this.files.set(fileId, f);
    this.total += bytes.length;
    for (const [id, old] of this.files) {
      if (this.total <= MAX_TOTAL_BYTES) break;
      this.files.delete(id);
      this.total -= old.size;
    }
    return f;
  }

  get(fileId: string): StoredFile | undefined {
    return this.files.get(fileId);
  }

  /** Files saved to the library, newest first. */
  library(): StoredFile[] {
    return [...this.files.values()].filter((f) => f.library).reverse();
  }

  /** A temporary download URL under `base` (Standin's public URL). */
  downloadUrl(base: string, fileId: string): string {
    const expires = Math.floor((this.clock.now() + DOWNLOAD_TTL_MS) / 1000);
    return `${base}/apps/files/${fileId}?expires=${expires}&sig=${this.sign(fileId, expires)}`;
  }

  /** Checks a download URL's signature and expiry; returns the file or why not. */
  check(fileId: string, expires: string | undefined, sig: string | undefined): StoredFile | 'expired' | 'invalid' {
    const exp = Number(expires);
    if (!Number.isInteger(exp) || typeof sig !== 'string') return 'invalid';
    const want = Buffer.from(this.sign(fileId, exp));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
    if (exp * 1000 < this.clock.now()) return 'expired';
    return this.files.get(fileId) ?? 'invalid';
  }

  private sign(fileId: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${fileId}.${expires}`).digest('base64url');
  }
}
