import { Readable } from 'node:stream';
import type { Store } from '../../store/db.js';
import * as store from '../store.js';
import { storedName, type FileStorage } from './interface.js';

/** Bytes per stored part: large enough that a 512 MB file is 512 rows, small enough to stream. */
export const PART_BYTES = 1 << 20;

/**
 * Files in the database, in parts of about 1 MiB (`file_parts`): on PostgreSQL every instance reads
 * what any instance stored. Parts are written as the upload arrives, one statement each (no transaction
 * held open for the length of an upload), and read back one at a time.
 */
export function dbStorage(db: Store['db']): FileStorage {
  return {
    kind: 'db',
    async write(id, source) {
      storedName(id);
      let seq = 0;
      let bytes = 0;
      let held: Buffer[] = [];
      let heldBytes = 0;
      const flush = async () => {
        const pieces = held;
        held = [];
        heldBytes = 0;
        await store.insertPart(db, id, seq++, pieces);
      };
      try {
        for await (const chunk of source) {
          bytes += chunk.length;
          held.push(chunk);
          heldBytes += chunk.length;
          if (heldBytes >= PART_BYTES) await flush();
        }
        if (heldBytes > 0 || seq === 0) await flush();
      } catch (err) {
        await store.deleteParts(db, id).catch(() => {});
        throw err;
      }
      return bytes;
    },
    async open(id, bytes) {
      storedName(id);
      const first =
        bytes !== undefined && bytes <= store.SMALL_PART ? await store.readSmallPart(db, id, 0) : await store.readPart(db, id, 0);
      if (!first) throw new Error(`the bytes of ${id} are missing from the store`);
      return Readable.from(
        (async function* () {
          yield first;
          for (let seq = 1, read = first.length; bytes === undefined || read < bytes; seq++) {
            const part = await store.readPart(db, id, seq);
            if (!part) return;
            read += part.length;
            yield part;
          }
        })(),
      );
    },
    async remove(id, exec) {
      storedName(id);
      await store.deleteParts(exec ?? db, id);
    },
    async clear() {
      // The control plane's reset empties every table, this one with them.
    },
  };
}
