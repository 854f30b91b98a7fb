// The request validators of every route (src/core/validation.ts), written out as code at build time: builds
// a Standin on an empty SQLite store in a temporary folder, notes each schema its routes validate with, and
// writes each one's ajv standalone code to the folder named, as <key>.cjs. A start then loads a route's
// validator on its first request instead of compiling it there (30–150 ms of the server's thread for the
// larger bodies). scripts/build.mjs bundles and runs it.
// Usage (bundled): node validators.js dist/validators
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import standalone from 'ajv/dist/standalone/index.js';
import { readSettings } from '../src/core/settings.js';
import { collectSchemas, makeAjv, schemaKey } from '../src/core/validation.js';
import { createStandin } from '../src/server/app.js';

const out = process.argv[2];
if (!out) throw new Error('usage: validators.js OUT_FOLDER');
const schemas = new Map<string, { schema: object; body: boolean }>();
collectSchemas((schema, body) => void schemas.set(schemaKey(schema, body), { schema, body }));
const dir = mkdtempSync(join(tmpdir(), 'standin-validators-'));
try {
  const { settings } = readSettings([], {});
  const standin = await createStandin({ ...settings, data: dir }, { logger: false });
  await standin.app.ready();
  await standin.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// One ajv instance a schema: standalone code holds every schema its instance compiled.
for (const [key, { schema, body }] of schemas) {
  const ajv = makeAjv(!body, true);
  writeFileSync(join(out, `${key}.cjs`), standalone.default(ajv, ajv.compile(schema)));
}
console.log(`build: ${schemas.size} request validators written to ${out}`);
