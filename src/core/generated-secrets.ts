import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { insideRoot } from './paths.js';

/**
 * Keeps a secret Standin generated for a config file (a key or a webhook signing secret declared without a
 * value) in a file only this process's user may read, `<data>/generated-secrets/<name>`, and returns its
 * path. The log then says where to read it, never the secret: logs are shipped and kept where secrets must
 * not be. One file per secret, replaced when a new one is generated under the same name.
 */
export function keepGeneratedSecret(dataDir: string, name: string, value: string): string {
  const dir = resolve(dataDir, 'generated-secrets');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  // `..` is made of allowed characters: the folder check refuses what the replacement lets through.
  const path = insideRoot(dir, name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200));
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}
