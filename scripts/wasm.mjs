// The WebAssembly modules of src/ (AssemblyScript, `*.as.ts`), compiled with asc: the build writes them
// beside the bundle (scripts/build.mjs), and their tests compile them from the sources the same way.
import { readFileSync } from 'node:fs';
import asc from 'assemblyscript/asc';

/** Options of every module: speed first, no runtime or garbage collector (the modules allocate nothing), no checks of their own. */
const OPTIONS = { optimizeLevel: 3, shrinkLevel: 0, runtime: 'stub', noAssert: true };

/** The module of `source` (a path from the repository's root), as bytes; throws with asc's messages. */
export async function compileWasm(source) {
  const { binary, stderr, error } = await asc.compileString(readFileSync(new URL(`../${source}`, import.meta.url), 'utf8'), OPTIONS);
  if (error || !binary) throw new Error(`asc ${source}: ${error?.message ?? ''}\n${stderr}`);
  return binary;
}
