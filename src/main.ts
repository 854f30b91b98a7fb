import { applyConfig, configSchema, readConfigFile } from './admin/config-file.js';
import { createStandin } from './server/app.js';
import { runEphemeral, runExec } from './server/exec.js';
import { modules } from './server/modules.js';
import { isSeeded, seedDemo } from './admin/seed.js';
import { isLoopback, isUnspecified, optionsHelp, readSettings, type Settings } from './core/settings.js';
import { openStore } from './store/db.js';
import { logDestination, logFormatOf } from './core/log.js';
import type { InstanceEvent } from './core/instance-events.js';
import { migrate } from './store/migrate.js';
import type { CliCommand } from './core/module.js';

/** The commands the areas add (`standin apps …`, `standin trigger …`), by name. */
function commands(): Record<string, CliCommand> {
  return Object.assign({}, ...modules.map((m) => m.commands ?? {}));
}

const BUILT_IN = ['serve', 'migrate', 'config-schema', 'exec', 'ephemeral'];

const USAGE = () => `standin — a self-hostable stand-in for the platform

Usage:
  standin [serve] [options]          run Standin (the default command)
  standin migrate [options]          run the database migrations and exit
  standin config-schema              print the JSON Schema of the config file
  standin exec [--import FILE] [--export-on-exit FILE] [options] -- <command…>
                                     run a command against a throwaway Standin, its URLs and keys in the environment
  standin ephemeral [--import FILE] [options]  a throwaway Standin that prints {url, keys, env} as one JSON line (docs/testing.md)
${Object.values(commands())
  .flatMap((c) => c.usage)
  .map((line) => `  standin ${line}`)
  .join('\n')}

Options (flag, environment variable):
${optionsHelp()}
`;

async function serve(settings: Settings): Promise<void> {
  const loopback = isLoopback(settings.host);
  if (!loopback && !settings.adminKey) {
    throw new Error(
      `refusing to listen on ${settings.host} without an admin key: set STANDIN_ADMIN_KEY (or --admin-key), and declare keys in a config file (--config).`,
    );
  }
  const demo = settings.seed && !settings.config;
  // A served instance logs its requests (docs/operations.md); Standin inside a test run (exec, standin/testing) stays quiet.
  const standin = await createStandin(
    { ...settings, seed: demo, logLevel: settings.logLevel ?? 'info' },
    {
      logStream: logDestination(logFormatOf(settings.logFormat), { batched: true }),
    },
  );
  const { ctx } = standin;
  // Refused before anything is written: a later start on this folder must not serve keys never printed.
  if (demo && !loopback && !(await isSeeded(ctx))) {
    await standin.close();
    throw new Error(`refusing to listen on ${settings.host} with generated demo keys: use --config or --no-seed.`);
  }
  if (settings.config) await applyConfig(ctx, modules, readConfigFile(settings.config));
  const seeded = demo ? await seedDemo(ctx, modules) : null;

  // Signal handlers go in before anything is printed: whoever reads the banner may signal at once.
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    ctx.log.info({ event: 'instance.signal' satisfies InstanceEvent, signal }, `${signal}: shutting down`);
    // The drain period, then as long again for jobs and stores, is all a stop may take.
    const force = setTimeout(() => process.exit(1), 15_000 + settings.shutdownDrainMs);
    force.unref();
    standin.close().then(
      () => process.exit(0),
      (err) => {
        ctx.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  const listening = await standin.listen();
  // On every interface, the links use the public URL (or this machine's loopback) and the banner says where it listens.
  const url = settings.publicUrl?.replace(/\/$/, '') ?? listening;
  const where = isUnspecified(settings.host) ? `${settings.host}:${new URL(listening).port} (every interface; links use ${url})` : url;
  const lines = [
    `Standin is listening on ${where}`,
    `  store: ${ctx.store.dialect === 'postgres' ? 'PostgreSQL' : `SQLite in ${settings.data}`}`,
  ];
  if (ctx.services.adminKeyGenerated) lines.push(`  admin key (control plane ${url}/admin/v1): ${ctx.auth.adminKey()}`);
  if (seeded) {
    lines.push('', 'First start: created a demo organization, project and ad account. Keys (shown once — save them):', ...seeded);
    const adsKey = seeded
      .find((l) => l.includes('ads API key'))
      ?.split(': ')
      .pop()
      ?.trim();
    if (adsKey)
      lines.push('', 'Try it:', `  curl -s '${url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks' -H 'Authorization: Bearer ${adsKey}'`);
  }
  lines.push(...ctx.banner, `  app host: ${url}/apps`);
  lines.push(`  API reference: ${url}/openapi.json   docs: docs/README.md`);
  process.stdout.write(lines.join('\n') + '\n');
}

export async function main(argv: string[]): Promise<number> {
  // What follows `--` belongs to the command being run, flags included (`exec -- vitest --run`).
  const end = argv.indexOf('--');
  const after = end < 0 ? [] : argv.slice(end + 1);
  const { settings, rest } = readSettings(end < 0 ? argv : argv.slice(0, end));
  const [command = 'serve', ...args] = rest;
  const extra = commands();
  const help = ['help', '--help', '-h'];
  // `--help` of a command an area adds is that command's own; of an unknown one it is an error, not the usage.
  if (help.includes(command) || (BUILT_IN.includes(command) && args.some((a) => help.includes(a)))) {
    process.stdout.write(USAGE());
    return 0;
  }
  switch (command) {
    case 'serve':
      await serve(settings);
      return -1;
    case 'migrate': {
      const store = openStore({ databaseUrl: settings.databaseUrl, dataDir: settings.data });
      const done = await migrate(store, modules);
      await store.close();
      process.stdout.write(done.length ? `applied: ${done.join(', ')}\n` : 'the database is up to date\n');
      return 0;
    }
    case 'exec':
      return runExec(settings, args, after);
    case 'ephemeral':
      return runEphemeral(settings, [...args, ...(end < 0 ? [] : ['--', ...after])]);
    case 'config-schema':
      process.stdout.write(JSON.stringify(configSchema(modules), null, 2) + '\n');
      return 0;
    default: {
      const found = extra[command];
      if (!found) {
        process.stderr.write(`unknown command '${command}'\n\n${USAGE()}`);
        return 2;
      }
      const run = await found.load();
      return run(end < 0 ? args : [...args, '--', ...after], { settings, boot: (s, opts) => createStandin(s, opts) });
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // Exit once stdout has drained: a pipe takes 64 KiB at a time, and `config-schema | wc -c` wants all of it.
    if (code >= 0) process.stdout.write('', () => process.exit(code));
  },
  (err) => {
    process.stderr.write(`standin: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
