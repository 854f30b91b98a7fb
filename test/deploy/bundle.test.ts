import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { root } from '../process.js';

/**
 * scripts/bundle-options.mjs leaves out of the server bundle what Fastify requires only on a call Standin
 * does not make (its default schema compilers, light-my-request for `inject`): a stand-in module loads
 * each from node_modules on first use. Bundled with the same options, a Fastify app that makes those
 * calls still works, and the bundle does not carry them.
 */
describe('the server bundle', () => {
  it("loads Fastify's on-demand packages from node_modules when they are called", async () => {
    const dir = join(root, 'node_modules/.cache/standin-bundle-test');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const entry = join(dir, 'entry.mjs');
    writeFileSync(
      entry,
      `import Fastify from 'fastify';
const app = Fastify();
const n = { type: 'object', properties: { n: { type: 'integer' } } };
app.get('/', { schema: { querystring: n, response: { 200: n } } }, async (r) => ({ n: r.query.n, dropped: true }));
const res = await app.inject('/?n=3');
console.log(res.statusCode, res.body);
`,
    );
    const options = join(root, 'scripts/bundle-options.mjs');
    const { serverBundle } = (await import(options)) as { serverBundle: BuildOptions };
    const outfile = join(dir, 'out.js');
    await build({ entryPoints: [entry], outfile, ...serverBundle, logLevel: 'error' });
    const bundle = readFileSync(outfile, 'utf8');
    for (const name of ['fast-json-stringify/index.js', 'ajv-compiler/index.js', 'light-my-request/lib/request.js'])
      expect(bundle).not.toContain(name);
    // ajv coerced the query (the default validator compiler), fast-json-stringify dropped what the
    // response schema does not name (the default serializer compiler), inject answered.
    expect(execFileSync(process.execPath, [outfile], { encoding: 'utf8' }).trim()).toBe('200 {"n":3}');
    rmSync(dir, { recursive: true, force: true });
  });
});
