// The esbuild options of Standin's server bundle, shared by the build and the benches that bundle an entry
// of their own (an older commit's server, a start-up probe), so each measures what `npm run build` makes.

/**
 * Packages Fastify requires only on a call Standin does not make at run time: its default schema compilers
 * (Standin gives its own, core/validation.ts) and light-my-request (`inject`). In the bundle they were
 * 420 KB of the main chunk that every start reads and compiles. Here each is a stand-in module that, if
 * ever required, loads the package from node_modules as Fastify itself would resolve it.
 */
const FASTIFY_ON_DEMAND = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'];
const fastifyOnDemand = {
  name: 'fastify-on-demand',
  setup(build) {
    const filter = new RegExp(`^(${FASTIFY_ON_DEMAND.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) =>
      /[\\/]node_modules[\\/]fastify[\\/]/.test(args.importer) ? { path: args.path, namespace: 'fastify-on-demand' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'fastify-on-demand' }, (args) => ({
      contents: `const { createRequire } = require('node:module');\nmodule.exports = createRequire(require.resolve('fastify'))(${JSON.stringify(args.path)});\n`,
      loader: 'js',
    }));
  },
};

export const serverBundle = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg-native', 'playwright-core', 'fsevents'],
  // Bundled CommonJS code calls require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __standinRequire } from 'node:module'; const require = __standinRequire(import.meta.url);" },
  plugins: [fastifyOnDemand],
};

/** Code splitting of the server bundle (an `outdir` build): dynamic imports become chunks loaded on first use. */
export const serverSplitting = { splitting: true, chunkNames: 'chunk-[hash]' };
