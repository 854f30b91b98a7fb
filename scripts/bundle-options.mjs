// The esbuild options of Standin's server bundle, shared by the build and the benches that bundle an entry
// of their own (an older commit's server, a start-up probe), so each measures what `npm run build` makes.
export const serverBundle = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg-native', 'playwright-core', 'fsevents'],
  // Bundled CommonJS code calls require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __standinRequire } from 'node:module'; const require = __standinRequire(import.meta.url);" },
};

/** Code splitting of the server bundle (an `outdir` build): dynamic imports become chunks loaded on first use. */
export const serverSplitting = { splitting: true, chunkNames: 'chunk-[hash]' };
