import type { CliEnv } from '../core/module.js';
import { exportSnapshotFile, importSnapshot, type exportSnapshot } from './service.js';

/** Boots a Standin on the store of the settings (no listener, no workers), runs `work`, closes it. */
async function withStore(
  env: CliEnv,
  name: string,
  args: string[],
  work: (ctx: Parameters<typeof exportSnapshot>[0], file: string) => Promise<string>,
) {
  const usage = `usage: standin ${name} [--data DIR | --database-url URL] FILE\n`;
  if (args.length === 1 && ['--help', '-h'].includes(args[0])) {
    process.stdout.write(usage);
    return 0;
  }
  const file = args[0];
  if (!file || args.length !== 1 || file.startsWith('-')) {
    process.stderr.write(usage);
    return 2;
  }
  const standin = await env.boot({ ...env.settings, workers: false, logLevel: 'silent', seed: false }, { logger: false });
  try {
    process.stdout.write((await work(standin.ctx, file)) + '\n');
    return 0;
  } catch (err) {
    const e = err as { status?: number; message: string };
    process.stderr.write(`standin ${name}: ${e.message}\n`);
    return e.status && e.status < 500 ? 2 : 1;
  } finally {
    await standin.close();
  }
}

/** `standin export FILE`: the whole state into a snapshot file (written beside, then renamed: never half a file). */
export const runExportCli = (args: string[], env: CliEnv) =>
  withStore(env, 'export', args, async (ctx, file) => {
    const t = await exportSnapshotFile(ctx, file);
    return `exported ${t.tables} tables, ${t.rows} rows, ${t.files} files (${t.bytes} bytes) to ${file}`;
  });

/** `standin import FILE`: replaces the whole state of the store with the snapshot's. */
export const runImportCli = (args: string[], env: CliEnv) =>
  withStore(env, 'import', args, async (ctx, file) => {
    const { totals: t } = await importSnapshot(ctx, file);
    return `imported ${t.tables} tables, ${t.rows} rows, ${t.files} files (${t.bytes} bytes) from ${file}`;
  });
