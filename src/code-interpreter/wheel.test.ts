import { describe, expect, it } from 'vitest';
import { sha256, sideModule, zip } from '../../test/code-interpreter/wheels.js';
import { wasmHashes } from './wheel.js';

describe('wasmHashes: the WebAssembly a verified archive holds', () => {
  const add = sideModule();
  const sub = sideModule(0x6b);
  const files = {
    'pkg/__init__.py': 'x = 1\n',
    'pkg/libadd.so': add,
    'pkg/data/not-named-so.bin': sub, // found by its magic number, not its name
    'pkg/fake.so': 'not wasm at all',
    'pkg/empty.so': '',
  };

  it('lists every wasm binary of stored and of deflated entries, by content', async () => {
    for (const deflate of [false, true]) expect((await wasmHashes(zip(files, deflate))).sort()).toEqual([sha256(add), sha256(sub)].sort());
  });

  it('refuses what is not a zip', async () => {
    await expect(wasmHashes(Buffer.from('hello, not a zip archive'))).rejects.toThrow(/not a zip archive/);
  });
});
