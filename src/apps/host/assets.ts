import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the built browser code (`dist/web`), found from this file whether it runs from src/ or dist/. */
export function webDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'web');
    dir = dirname(dir);
  }
  return join(process.cwd(), 'dist', 'web');
}

const cache = new Map<string, Buffer>();

/** Reads a built asset (`apps/host.js`); cached after the first read. Throws a readable error when not built. */
export function asset(name: string): Buffer {
  let b = cache.get(name);
  if (!b) {
    const file = join(webDir(), name);
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build (node scripts/build-web.mjs)`);
    b = readFileSync(file);
    cache.set(name, b);
  }
  return b;
}
