import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the filesystem is read-only',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENOSPC: 'the disk is full',
  EEXIST: 'a file of that name is in the way',
};

/** Says what is wrong with a data folder in words an operator can act on. */
export function folderError(dir: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return new Error(`cannot use the data folder ${resolve(dir)}: ${REASONS[code] ?? (err as Error).message}${code ? ` (${code})` : ''}`);
}

/** Makes the data folder and checks that this process may write in it (before SQLite says only "unable to open database file"). */
export function prepareFolder(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw folderError(dir, err);
  }
  return dir;
}

/**
 * Claims a SQLite data folder for this process's workers: one serving process per folder owns its job
 * queue (so it may reclaim at start what a killed predecessor had claimed). A second `serve` on the same
 * folder is refused; a lock left by a process that no longer runs is taken over. Returns the release.
 */
export function claimFolder(dir: string): () => void {
  const path = resolve(dir, 'standin.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw folderError(dir, err);
      const pid = Number(readFileSync(path, 'utf8'));
      if (pid && pid !== process.pid && alive(pid)) {
        throw new Error(
          `another Standin (pid ${pid}) serves the data folder ${resolve(dir)}: one process per SQLite folder; use PostgreSQL (--database-url) for several`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not claim the data folder ${resolve(dir)}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
