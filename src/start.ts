// The command line's entry (dist/main.js): it turns on Node's compile cache, holds off V8's optimizing
// compiler for the start (core/tiering.ts: the instance resumes it once it listens), then loads Standin.
// With the cache (Node 22.1 and later), V8's compiled code of the bundle is kept on disk (the system's
// temporary folder, or NODE_COMPILE_CACHE) and a later start reuses it rather than compile megabytes of
// JavaScript again (bench/cold-start.mjs). Node 20 has no such cache: there it changes nothing.
import module from 'node:module';
import { holdOptimizing } from './core/tiering.js';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
holdOptimizing();
await import('./main.js');
