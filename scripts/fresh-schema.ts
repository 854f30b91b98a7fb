// The build's fresh schema (src/store/fresh-schema.ts): runs every migration on an empty SQLite store in a
// temporary folder and writes what they made to the file named. scripts/build.mjs bundles and runs it.
// Usage (bundled): node fresh-schema.js dist/fresh-schema.json
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { modules } from '../src/server/modules.js';
import { openStore } from '../src/store/db.js';
import { captureFreshSchema } from '../src/store/fresh-schema.js';
import { migrate } from '../src/store/migrate.js';

const out = process.argv[2];
if (!out) throw new Error('usage: fresh-schema.js OUT.json');
const dir = mkdtempSync(join(tmpdir(), 'standin-fresh-schema-'));
try {
  const store = openStore({ dataDir: dir });
  await migrate(store, modules, undefined, undefined, null);
  await store.close();
  const sqlite = new SQLite(join(dir, 'standin.db'), { readonly: true });
  writeFileSync(out, JSON.stringify(captureFreshSchema(sqlite)) + '\n');
  sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
