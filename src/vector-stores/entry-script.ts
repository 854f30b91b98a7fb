import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';

const scripts = new Map<string, string>();

/**
 * The script of a second entry of the bundle (the ingestion process, the search worker): `<name>.js`
 * beside the bundle (dist/), or else, running from source (tests), `src/vector-stores/<name>.ts` bundled
 * once with esbuild (a development dependency) into node_modules/.cache, where its packages resolve.
 */
export function entryScript(name: 'ingest-child' | 'search-worker'): string {
  const known = scripts.get(name);
  if (known) return known;
  const here = dirname(fileURLToPath(import.meta.url));
  const built = join(here, `${name}.js`);
  if (existsSync(built)) return remember(name, built);
  for (let dir = here; ; dir = dirname(dir)) {
    const source = [join(dir, `${name}.ts`), join(dir, `src/vector-stores/${name}.ts`)].find(existsSync);
    if (source) return remember(name, bundle(name, source, dir === here ? join(here, '../..') : dir));
    if (dirname(dir) === dir) throw new Error(`the script dist/${name}.js is missing: run npm run build`);
  }
}

function remember(name: string, file: string): string {
  scripts.set(name, file);
  return file;
}

function bundle(name: string, source: string, root: string): string {
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
  const out = esbuild.buildSync({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'warning',
  }).outputFiles[0].text;
  const folder = join(root, 'node_modules/.cache/standin');
  const file = join(folder, `${name}-${createHash('sha256').update(out).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(folder, { recursive: true });
    const part = `${file}.${process.pid}.part`;
    writeFileSync(part, out);
    renameSync(part, file);
  }
  return file;
}
