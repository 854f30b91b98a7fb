/**
 * A Standin in its own process for the crash test: SQLite in the folder given as argv[2], the test key,
 * the test models; prints `{"url": …}` once listening. Bundled and started by recovery.test.ts.
 */
import { createApiKey } from '../../src/identity/service.js';
import { readSettings } from '../../src/core/settings.js';
import { createStandin } from '../../src/server/app.js';
import { applyConfig } from '../../src/admin/config-file.js';
import { seedDemo } from '../../src/admin/seed.js';
import { TEST_KEYS } from '../helpers.js';

const [dir, workers, models] = process.argv.slice(2);
const { settings } = readSettings([], {});
Object.assign(settings, { data: dir, port: 0, logLevel: 'silent', adminKey: TEST_KEYS.admin, workers: workers === 'true' });
const standin = await createStandin(settings, { logger: false });
if (await seedDemo(standin.ctx, standin.modules))
  await createApiKey(standin.ctx, standin.ctx.store.db, { projectId: 'proj_demo', name: 'test', value: TEST_KEYS.platform });
await applyConfig(standin.ctx, standin.modules, { models: JSON.parse(models) });
const url = await standin.listen();
process.stdout.write(`${JSON.stringify({ url })}\n`);
