import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILE_SLICE, readFileInSlices } from './file-slices.js';

describe('readFileInSlices', () => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-slices-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([0, 1, FILE_SLICE - 1, FILE_SLICE, 2 * FILE_SLICE + FILE_SLICE / 2 + 3])('reads a file of %i bytes whole, in order', (size) => {
    const path = join(dir, `f${size}`);
    const bytes = randomBytes(size);
    writeFileSync(path, bytes);
    expect(readFileInSlices(path).equals(bytes)).toBe(true);
  });

  it('throws for a file that is not there', () => {
    expect(() => readFileInSlices(join(dir, 'missing'))).toThrow(/ENOENT/);
  });
});
