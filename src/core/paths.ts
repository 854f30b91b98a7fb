import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * The path of `name` inside the folder `root`, or an error when it is not one: a name that is empty,
 * absolute, holds a NUL, or resolves to the folder itself or outside it (`..`, `a/../../b`). Every place a
 * stored or received value becomes a file name goes through here, so no row, snapshot or config value can
 * point a read, write or delete elsewhere. The message names the value, never the folder.
 */
export function insideRoot(root: string, name: string): string {
  if (typeof name !== 'string' || name === '' || name.includes('\0') || isAbsolute(name))
    throw new Error(`'${printable(name)}' is not a file name inside its folder`);
  const base = resolve(root);
  const path = resolve(base, name);
  const rel = relative(base, path);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(`'${printable(name)}' is not a file name inside its folder`);
  return path;
}

/** The value for a message: bounded, control characters escaped. */
const printable = (v: unknown) =>
  String(v)
    .slice(0, 200)
    // eslint-disable-next-line no-control-regex -- control characters are what it escapes
    .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
