import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimFolder, prepareFolder } from './folder.js';
import { openStore } from './db.js';

describe('data folder', () => {
  it('one serving process per SQLite folder: a live owner refuses a second, a dead one is taken over', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-folder-'));
    // A process that certainly runs (this test's parent) holds the folder.
    writeFileSync(join(dir, 'standin.pid'), String(process.ppid));
    expect(() => claimFolder(dir)).toThrow(new RegExp(`another Standin \\(pid ${process.ppid}\\) serves the data folder`));
    // A process that is gone (pid far beyond any in use) left its lock behind.
    writeFileSync(join(dir, 'standin.pid'), '4194303');
    const release = claimFolder(dir);
    expect(readFileSync(join(dir, 'standin.pid'), 'utf8')).toBe(String(process.pid));
    release();
    expect(() => readFileSync(join(dir, 'standin.pid'))).toThrow();
  });

  it.runIf(process.getuid?.() !== 0)('names the folder and the cause when it cannot be written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-folder-'));
    chmodSync(dir, 0o500);
    expect(() => openStore({ dataDir: join(dir, 'data') })).toThrow(/cannot use the data folder .*data: permission denied \(EACCES\)/);
  });

  it('names the folder when a file stands where it should be', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-folder-'));
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => prepareFolder(join(dir, 'file', 'data'))).toThrow(
      /cannot use the data folder .*file\/data: a part of the path is a file, not a folder \(ENOTDIR\)/,
    );
  });
});
