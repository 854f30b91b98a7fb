// The command line's entry (dist/main.js): it turns on Node's compile cache, tunes V8 for the start
// (core/v8-start.ts: the instance ends that once it listens), then loads Standin.
// With the cache (Node 22.1 and later), V8's compiled code of the bundle is kept on disk (the system's
// temporary folder, or NODE_COMPILE_CACHE) and a later start reuses it rather than compile megabytes of
// JavaScript again (bench/cold-start.mjs). Node 20 has no such cache: there it changes nothing.
import module from 'node:module';
import { tuneV8ForStart } from './core/v8-start.js';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
tuneV8ForStart();
await import('./main.js');
