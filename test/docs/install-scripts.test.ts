import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

type Lock = { packages: Record<string, { hasInstallScript?: boolean }> };
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as Lock;

/**
 * npm 12 runs a dependency's install script only when `allowScripts` in package.json allows it (README, Two
 * commands). A dependency that comes with an install script and is not named there would be installed
 * without it, silently, and fail later at run time: it is named here first, allowed or denied.
 */
describe('install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));

  it('names every dependency of the lock file that has an install script, and no other', () => {
    expect(Object.keys(manifest.allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
  });

  it('allows the embedded store’s native module and the bundler', () => {
    expect(manifest.allowScripts).toMatchObject({ 'better-sqlite3': true, esbuild: true });
  });
});
