import { Readable } from 'node:stream';
import type { FileStorage } from './interface.js';

/**
 * The bytes of the files this instance stored last, kept in memory up to `maxBytes` in all, in front of a
 * storage in the database (PostgreSQL): a file attached right after its upload, as a batch's files are, is
 * then ingested without reading it back (its parts came as hex, twice their size, and were decoded on the
 * server's thread: 9 ms of the server's and PostgreSQL's CPU per MB ingested; docs/files.md, "Stop 70").
 *
 * Kept only once the storage has stored the file, so what is kept is always also stored; a file's bytes
 * never change under its id, and a file whose row is gone is never opened (its row decides, service.ts), so
 * what another instance deletes can stay here until it leaves. A file over a quarter of `maxBytes` is not
 * kept (it would push out the others); the oldest leave first. While uploads arrive, what they send is
 * gathered up to `maxBytes` more in all; an upload past that is not kept. A read is served from here only
 * when its size is the one the row gives. The buffers handed out are shared: not to be changed.
 */
export function keepRecent(storage: FileStorage, maxBytes: number): FileStorage {
  const kept = new Map<string, Buffer>();
  let keptBytes = 0;
  /** Bytes of the uploads in progress gathered so far, at most `maxBytes` in all: past it an upload is not kept. */
  let gathering = 0;
  const forget = (id: string) => {
    const bytes = kept.get(id);
    if (!bytes) return;
    kept.delete(id);
    keptBytes -= bytes.length;
  };
  return {
    ...storage,
    async write(id, source) {
      forget(id);
      let parts: Buffer[] | undefined = [];
      let length = 0;
      let gathered = 0;
      const letGo = () => {
        gathering -= gathered;
        gathered = 0;
        parts = undefined;
      };
      let bytes: number;
      try {
        bytes = await storage.write(
          id,
          (async function* () {
            for await (const chunk of source) {
              length += chunk.length;
              if (parts && length <= maxBytes / 4 && gathering + chunk.length <= maxBytes) {
                parts.push(chunk);
                gathered += chunk.length;
                gathering += chunk.length;
              } else if (parts) letGo();
              yield chunk;
            }
          })(),
        );
      } catch (err) {
        letGo();
        throw err;
      }
      const whole = parts && length === bytes ? parts : undefined;
      letGo();
      if (whole) {
        // One buffer of its own, not the upload's pieces (which may hold more memory than their bytes).
        kept.set(id, Buffer.concat(whole, length));
        keptBytes += length;
        for (const [oldest, b] of kept) {
          if (keptBytes <= maxBytes) break;
          kept.delete(oldest);
          keptBytes -= b.length;
        }
      }
      return bytes;
    },
    async open(id, bytes) {
      const hit = kept.get(id);
      if (hit && bytes === hit.length) return Readable.from([hit]);
      return storage.open(id, bytes);
    },
    async remove(id, exec) {
      forget(id);
      await storage.remove(id, exec);
    },
    async clear() {
      kept.clear();
      keptBytes = 0;
      await storage.clear();
    },
  };
}
