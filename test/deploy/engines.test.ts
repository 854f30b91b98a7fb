import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Issue 37: `engines` promises Node lines; every package Standin runs on (the lock file's production tree)
 * must promise them too, from each line's first supported version. A dependency that wants a newer Node
 * (as `cookie@2`, through Fastify's `light-my-request`, wanted Node 22) makes `npm ci` warn `EBADENGINE`
 * on a line we call supported: it is pinned (`overrides` in package.json) or the line is dropped.
 */
const root = join(import.meta.dirname, '..', '..');
const read = <T>(file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as T;

type Locked = { dev?: boolean; engines?: { node?: string } | string[] };

/** The first version of each line `engines` names: `^20.19.0 || ^22.12.0` → 20.19.0, 22.12.0. */
export const firstVersions = (engines: string) => [...engines.matchAll(/\^(\d+\.\d+\.\d+)/g)].map((m) => m[1]!);

describe('the Node lines engines names', () => {
  const engines = read<{ engines: { node: string } }>('package.json').engines.node;
  const packages = read<{ packages: Record<string, Locked> }>('package-lock.json').packages;

  it('names at least the running line, each by its first version', () => {
    expect(firstVersions(engines).length).toBe(engines.split('||').length);
    expect(firstVersions(engines).map((v) => semver.major(v))).toContain(semver.major(process.versions.node));
  });

  it('is promised by every package of the production tree', () => {
    const wanting: string[] = [];
    let checked = 0;
    for (const [path, entry] of Object.entries(packages)) {
      const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      if (!path || entry.dev || !range) continue;
      checked++;
      for (const first of firstVersions(engines)) {
        if (!semver.satisfies(first, range)) wanting.push(`${path} wants node ${range}, not ${first}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(wanting).toEqual([]);
  });

  it('finds a package that wants a newer line (the check can fail)', () => {
    expect(semver.satisfies(firstVersions(engines)[0]!, '>=22')).toBe(false);
  });
});
