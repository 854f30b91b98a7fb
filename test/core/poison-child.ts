/**
 * A Standin in its own process for the poison-job test: SQLite in the folder argv[2] (or the PostgreSQL of
 * argv[3]), the test key, and a job kind whose handler kills the process. Each run of the handler is a
 * line of argv[4]/runs; the kind's onAbandon writes its reason to argv[4]/abandoned. With argv[5] =
 * `enqueue` it queues one such job. Prints `{"url": …}` once listening. Bundled by poison-job.test.ts.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../../src/identity/service.js';
import { readSettings } from '../../src/core/settings.js';
import { createStandin } from '../../src/server/app.js';
import { seedDemo } from '../../src/admin/seed.js';
import { TEST_KEYS } from '../helpers.js';

const [dir, databaseUrl, out, enqueue] = process.argv.slice(2);
const { settings } = readSettings([], {});
Object.assign(settings, { data: dir, databaseUrl: databaseUrl || undefined, port: 0, logLevel: 'silent', adminKey: TEST_KEYS.admin });
const standin = await createStandin(settings, { logger: false });
const { ctx } = standin;
if (await seedDemo(ctx, standin.modules))
  await createApiKey(ctx, ctx.store.db, { projectId: 'proj_demo', name: 'test', value: TEST_KEYS.platform });
ctx.jobs.register({
  kind: 'test.poison',
  // A dead process's claim lapses soon (PostgreSQL has no owner to take claims back at start).
  visibilityMs: 300,
  handler: async (payload: { file: string }) => {
    appendFileSync(join(out, 'runs'), `${payload.file}\n`);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  },
  onAbandon: async (payload: { file: string }, reason) => writeFileSync(join(out, 'abandoned'), `${payload.file}: ${reason}`),
});
if (enqueue === 'enqueue') await ctx.jobs.enqueue(ctx.store.db, 'test.poison', { file: 'file_poison' });
const url = await standin.listen();
process.stdout.write(`${JSON.stringify({ url })}\n`);
