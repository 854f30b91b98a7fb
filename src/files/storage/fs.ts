import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { insideRoot } from '../../core/paths.js';
import { storedName, type FileStorage } from './interface.js';

/**
 * Files in the data folder (`<data>/files/<id>`): written to `<id>.part`, renamed once complete, so a
 * reader never sees half a file. Every name is checked here, whoever asks (`storedName`, then `insideRoot`):
 * a row imported from a snapshot or a job's payload cannot reach a file outside the folder.
 */
export function fsStorage(dir: string): FileStorage {
  let made: Promise<unknown> | undefined;
  const ready = () => (made ??= mkdir(dir, { recursive: true }));
  const path = (id: string) => insideRoot(dir, storedName(id));
  return {
    kind: 'fs',
    async write(id, source) {
      await ready();
      const part = `${path(id)}.part`;
      let bytes = 0;
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          bytes += chunk.length;
          done(null, chunk);
        },
      });
      try {
        await pipeline(source, count, createWriteStream(part));
        await rename(part, path(id));
      } catch (err) {
        await rm(part, { force: true });
        throw err;
      }
      return bytes;
    },
    async open(id) {
      const handle = await open(path(id), 'r');
      return handle.createReadStream();
    },
    localPath: path,
    async remove(id) {
      await rm(path(id), { force: true });
      await rm(`${path(id)}.part`, { force: true });
    },
    async clear() {
      await rm(dir, { recursive: true, force: true });
      made = undefined;
    },
  };
}
