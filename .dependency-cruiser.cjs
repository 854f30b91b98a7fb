/**
 * The import boundaries of DESIGN.md (Layout), checked by `npm test`:
 * server (the composition root) → areas → core / store; nothing but main.ts imports server; core and
 * store import no area; an area reaches another area only through that area's public files
 * (`service.ts`, `types.ts`); no cycles.
 */
module.exports = {
  forbidden: [
    { name: 'no-cycle', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    { name: 'web-no-cycle', severity: 'error', from: { path: '^web/' }, to: { circular: true } },
    {
      name: 'web-takes-only-wire-types',
      comment: "web/ runs in the browser: of the server it takes only the route schemas' types, from a src/**/wire.ts.",
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/', pathNot: '^src/.+/wire\\.ts$' },
    },
    {
      name: 'web-imports-wire-types-only',
      comment: 'A wire.ts holds types only; web/ imports it with `import type`, so no server code reaches the bundle.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/.+/wire\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'wire-is-types-only',
      comment: 'A wire.ts reads the schemas of any area, for their types alone.',
      severity: 'error',
      from: { path: '^src/.+/wire\\.ts$' },
      to: { path: '^src/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'floors-import-no-area',
      comment: 'core and store are the ground floor: they know no area.',
      severity: 'error',
      from: { path: '^src/(core|store)/' },
      to: { path: '^src/', pathNot: '^src/(core|store)/' },
    },
    {
      name: 'store-below-core',
      comment: 'The store knows nothing of core (core uses the store).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/core/' },
    },
    {
      name: 'nothing-imports-the-composition-root',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/main\\.ts$', '^src/server/', '\\.test\\.ts$'] },
      to: { path: '^src/server/' },
    },
    {
      name: 'areas-meet-through-public-files',
      comment: "An area reaches another area only through that area's service.ts or types.ts, never its tables, store or routes.",
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: ['^src/(core|store|server)/', '\\.test\\.ts$', '^src/.+/wire\\.ts$'] },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/$1/', '^src/(core|store)/', '^src/[^/]+/(service|types)\\.ts$', '^src/[^/]+/[^/]+/(service|types)\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
