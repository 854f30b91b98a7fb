// What bench/cold-start-parts.ts loads, in one module: it imports this after tuning V8 for the start,
// as src/start.ts imports src/main.ts (one dynamic import of the bundle's main chunk).
export { isSeeded, seedDemo } from '../src/admin/seed.js';
export { readSettings } from '../src/core/settings.js';
export { createStandin } from '../src/server/app.js';
export { modules } from '../src/server/modules.js';
export { openStore } from '../src/store/db.js';
export { migrate } from '../src/store/migrate.js';
