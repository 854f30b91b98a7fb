// Issue 34, the class: every place a value from a file, a row or a config becomes a file name stays inside
// its folder (core/paths insideRoot). File storage has its own attacks in snapshots.test.ts.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { PackageStore } from '../../src/code-interpreter/packages.js';
import { keepGeneratedSecret } from '../../src/core/generated-secrets.js';
import { fsStorage } from '../../src/files/storage/fs.js';

const tmp = mkdtempSync(join(tmpdir(), 'standin-security-paths-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('values that become file names stay inside their folder', () => {
  it("the code interpreter's package cache and local source refuse a lock file naming a path", async () => {
    const source = join(tmp, 'mirror');
    const cache = join(tmp, 'cache');
    const outside = join(tmp, 'outside.whl');
    const bytes = Buffer.from('not a wheel, but the hash matches');
    writeFileSync(outside, bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const lock = (pkg: Record<string, unknown>) => {
      const path = join(tmp, `lock-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(
        path,
        JSON.stringify({ packages: { evil: { name: 'evil', depends: [], imports: ['evil'], install_dir: 'site', ...pkg } } }),
      );
      return path;
    };
    const store = (lockFile: string) => new PackageStore({ source, lockFile, cacheDir: cache, blocked: [] });
    for (const file_name of ['../outside.whl', '/etc/passwd', '..', 'a/b.whl', 'x\u0000.whl'])
      expect(() => store(lock({ file_name, sha256 })), file_name).toThrow(/not a plain file name/);
    expect(() => store(lock({ file_name: 'evil.whl', sha256: `../../../../${'0'.repeat(60)}` }))).toThrow(/not 64 hex digits/);
    // A plain name is read from the source folder and cached inside the cache folder.
    writeFileSync(join(tmp, 'mirror-evil.whl'), bytes);
    const fine = new PackageStore({ source: tmp, lockFile: lock({ file_name: 'mirror-evil.whl', sha256 }), cacheDir: cache, blocked: [] });
    const [pkg] = fine.resolve(['evil'], new Set());
    expect(Buffer.from(await fine.fetch(pkg))).toEqual(bytes);
    expect(readdirSync(cache)).toEqual([`${sha256.slice(0, 16)}-mirror-evil.whl`]);
  });

  it('a generated secret is kept inside its folder whatever its name', () => {
    expect(() => keepGeneratedSecret(tmp, '..', 'secret')).toThrow(/not a file name inside its folder/);
    const path = keepGeneratedSecret(tmp, '../../x', 'secret');
    expect(path).toBe(join(tmp, 'generated-secrets', '.._.._x'));
  });

  it('the folder storage writes, reads, removes and names to the ingestion processes only names inside its folder', async () => {
    const dir = join(tmp, 'files');
    const storage = fsStorage(dir);
    const victim = join(tmp, 'victim');
    writeFileSync(victim, 'keep me');
    for (const name of ['../victim', victim, '..', 'a/../../victim', 'x\u0000']) {
      await expect(storage.open(name)).rejects.toThrow(/not a name file storage keeps bytes under/);
      await expect(storage.remove(name)).rejects.toThrow(/not a name file storage keeps bytes under/);
      await expect(storage.write(name, (async function* () {})())).rejects.toThrow(/not a name file storage keeps bytes under/);
      expect(() => storage.localPath!(name)).toThrow(/not a name file storage keeps bytes under/);
    }
    expect(storage.localPath!('file-ok')).toBe(join(dir, 'file-ok'));
    expect(existsSync(victim)).toBe(true);
    expect(
      await storage.write(
        'file-ok',
        (async function* () {
          yield Buffer.from('ok');
        })(),
      ),
    ).toBe(2);
  });
});
