import { readFile } from 'node:fs/promises';

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

/**
 * find-my-way (Fastify's router) compiles code with `new Function` as routes are added: a prefix matcher
 * for each static node of the tree (again at each split), a params builder for each route and a
 * constraints matcher for each node's handlers. For Standin's few hundred routes that was a fifth of
 * building the app, at every start, for matchers most requests never reach. In the bundle each is
 * compiled on its first call instead (then replaces itself: the lookups after run the same code as before).
 * Each edit must find the text it replaces: a find-my-way that changed fails the build here, rather than
 * leave the start slower unnoticed.
 */
const FIND_MY_WAY_EDITS = {
  'lib/node.js': [
    [
      'this.matchPrefix = kind === NODE_TYPES.STATIC ? compilePrefixMatch(prefix) : null',
      'this.matchPrefix = kind === NODE_TYPES.STATIC ? prefixMatchOnFirstUse(this, prefix) : null',
    ],
    ['this.matchPrefix = compilePrefixMatch(childPrefix)', 'this.matchPrefix = prefixMatchOnFirstUse(this, childPrefix)'],
    [
      'function compilePrefixMatch (prefix) {',
      `function prefixMatchOnFirstUse (node, prefix) {
  if (prefix.length === 1) return matchSingleCharPrefix
  const onFirstUse = function (path, i) {
    const compiled = compilePrefixMatch(prefix)
    if (node.matchPrefix === onFirstUse) node.matchPrefix = compiled
    return compiled(path, i)
  }
  return onFirstUse
}

function compilePrefixMatch (prefix) {`,
    ],
  ],
  'lib/handler-storage.js': [
    [
      '_createParamsObject: this._compileCreateParamsObject(params)\n    }\n',
      `_createParamsObject: null
    }
    const storage = this
    handlerObject._createParamsObject = function (param0, param1, param2, param3, extraParams) {
      handlerObject._createParamsObject = storage._compileCreateParamsObject(params)
      return handlerObject._createParamsObject(param0, param1, param2, param3, extraParams)
    }
`,
    ],
    [
      '      this._compileGetHandlerMatchingConstraints(constrainer, constraints)\n',
      `      this._getHandlerMatchingConstraints = function (derivedConstraints) {
        this._compileGetHandlerMatchingConstraints(constrainer, constraints)
        return this._getHandlerMatchingConstraints(derivedConstraints)
      }
`,
    ],
  ],
};
const findMyWayOnFirstUse = {
  name: 'find-my-way-on-first-use',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]find-my-way[\\/]lib[\\/](node|handler-storage)\.js$/ }, async (args) => {
      const file = args.path.replace(/\\/g, '/').replace(/.*\/find-my-way\//, '');
      let contents = await readFile(args.path, 'utf8');
      for (const [from, to] of FIND_MY_WAY_EDITS[file]) {
        if (!contents.includes(from))
          throw new Error(`find-my-way/${file} changed: scripts/bundle-options.mjs cannot find ${JSON.stringify(from)}`);
        contents = contents.replace(from, () => to);
      }
      return { contents, loader: 'js' };
    });
  },
};

/** The bundle's entries besides the server's: the ingestion process (ingest-pool.ts forks it) and the search worker (index-cache.ts starts it). */
export const secondEntries = {
  'ingest-child': 'src/vector-stores/ingest-child.ts',
  'search-worker': 'src/vector-stores/search-worker.ts',
};

export const serverBundle = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg-native', 'playwright-core', 'fsevents'],
  // Bundled CommonJS code calls require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __standinRequire } from 'node:module'; const require = __standinRequire(import.meta.url);" },
  plugins: [fastifyOnDemand, findMyWayOnFirstUse],
};

/** Code splitting of the server bundle (an `outdir` build): dynamic imports become chunks loaded on first use. */
export const serverSplitting = { splitting: true, chunkNames: 'chunk-[hash]' };

/**
 * The server as one CommonJS script (dist/standin.cjs), which dist/main.js compiles with V8's code cache
 * (src/core/code-cache.ts): a script, unlike a module, can be compiled with one on every Node line. What
 * was a chunk loaded on first use is a function of the script, compiled on its first call. `import.meta.url`
 * is the script's own file; `require` is the one Node's loader would give it.
 */
export const serverScript = {
  ...serverBundle,
  format: 'cjs',
  banner: { js: "const __standinImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__standinImportMetaUrl' },
  // fastifyOnDemand's modules resolve Fastify at run time, on purpose (require.resolve of a bundled package).
  logOverride: { 'require-resolve-not-external': 'silent' },
};
