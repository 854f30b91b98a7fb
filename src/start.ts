// The command line's entry (dist/main.js): it turns on Node's compile cache, tunes V8 for the start
// (core/v8-start.ts: the instance ends that once it listens), then runs the server's script, dist/standin.cjs,
// with the V8 code cache the build made beside it (core/code-cache.ts, bench/cold-start.mjs).
// Node's compile cache (Node 22.1 and later) keeps the code of modules loaded from disk (the ingestion
// process's and the search worker's entries, packages); the server's script is compiled with its own.
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { runScript } from './core/code-cache.js';
import { tuneV8ForStart } from './core/v8-start.js';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
tuneV8ForStart();
runScript(fileURLToPath(new URL('./standin.cjs', import.meta.url)));
