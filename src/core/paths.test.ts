import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { insideRoot } from './paths.js';

describe('insideRoot', () => {
  const root = '/srv/data/files';
  it('gives the path of a plain name, or of a name in a subfolder', () => {
    expect(insideRoot(root, 'file-abc')).toBe(join(root, 'file-abc'));
    expect(insideRoot(`${root}/`, 'a/b.whl')).toBe(join(root, 'a', 'b.whl'));
    expect(insideRoot('relative/dir', 'x')).toBe(resolve('relative/dir', 'x'));
  });
  it('refuses names that leave the folder, name the folder itself, are absolute, empty or hold a NUL', () => {
    for (const bad of [
      '..',
      '../x',
      '../../../etc/passwd',
      'a/../../x',
      '.',
      'a/..',
      '/etc/passwd',
      '',
      'x\0y',
      '..\\..\\x'.replace(/\\/g, '/'),
    ])
      expect(() => insideRoot(root, bad), JSON.stringify(bad)).toThrow(/is not a file name inside its folder/);
    expect(() => insideRoot(root, 'files-other/../../files-other/x')).toThrow();
    // a sibling folder whose name starts with the root's is outside it
    expect(() => insideRoot(root, '../files2/x')).toThrow();
  });
  it('escapes control characters in its message and never names the folder', () => {
    const err = (() => {
      try {
        insideRoot(root, '../\0\n');
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(err).toContain('\\x00\\x0a');
    expect(err).not.toContain(root);
  });
});
