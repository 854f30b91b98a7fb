import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built dashboard (`dist/web/dashboard`), found from this file whether it runs from src/ or dist/. */
function dashboardDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'web', 'dashboard');
    dir = dirname(dir);
  }
  return join(process.cwd(), 'dist', 'web', 'dashboard');
}

/** The built files, read once per instance: the bundle is small and served on every page load. */
export class Assets {
  private cache = new Map<string, Buffer>();
  private readonly dir = dashboardDir();

  /** A built file, or null when it is not there (not built, or no such file). */
  get(name: string): Buffer | null {
    let b = this.cache.get(name);
    if (!b) {
      const file = join(this.dir, name);
      if (!existsSync(file)) return null;
      b = readFileSync(file);
      this.cache.set(name, b);
    }
    return b;
  }
}
