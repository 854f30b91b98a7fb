// The command line's entry (dist/main.js): it turns on Node's compile cache, then loads Standin. With the
// cache (Node 22.1 and later), V8's compiled code of the bundle is kept on disk (the system's temporary
// folder, or NODE_COMPILE_CACHE) and a later start reuses it rather than compile megabytes of JavaScript
// again (bench/cold-start.mjs). Node 20 has no such cache: there it changes nothing.
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./main.js');
