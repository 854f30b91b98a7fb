import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { wallNow } from './core/clock.js';
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

/** This release's version: package.json's, beside dist/ in a checkout and in the installed package. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** How long a stop may take past its drain before the process exits anyway (docs/deploy.md). */
const STOP_BOUND_MS = 10_000;

const BUILT_IN = ['serve', 'migrate', 'config-schema', 'exec', 'ephemeral', 'dashboard-link'];

const USAGE = () => `standin — a self-hostable stand-in for the platform

Usage:
  standin [serve] [options]          run Standin (the default command)
  standin --version                  print the version (package.json's)
  standin migrate [options]          run the database migrations and exit
  standin config-schema              print the JSON Schema of the config file
  standin dashboard-link [options]   print a one-time dashboard sign-in link from the instance on --host/--port (needs the admin key)
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
    // The bound docs/deploy.md states: the drain, then 10 s for the stores and the handlers handed back.
    const force = setTimeout(() => {
      ctx.log.error({ event: 'instance.stopped' satisfies InstanceEvent, forced: true }, 'the stop overran its bound: exiting now');
      process.exit(1);
    }, STOP_BOUND_MS + settings.shutdownDrainMs);
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
  // A closed terminal (or `kill -HUP`, a supervisor's reload) drains too: it never ends the instance at once.
  process.on('SIGHUP', () => shutdown('SIGHUP'));

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
  // A sign-in link signs its bearer in: it is shown to a person at a terminal, never written to a pipe, a
  // file or the journal, where the line says how to get one instead.
  const terminal = process.stdout.isTTY === true;
  for (const line of ctx.banner)
    lines.push(
      terminal || !line.includes('/dashboard/sign-in?token=')
        ? line
        : `  dashboard: ${url}/dashboard   (no sign-in link in a log: run \`standin dashboard-link\` with this instance's settings)`,
    );
  lines.push(`  app host: ${url}/apps`, `  API reference: ${url}/openapi.json   docs: docs/README.md`);
  // The banner follows --log-format: one JSON line among the others (at any level), or text.
  if (logFormatOf(settings.logFormat) === 'json')
    process.stdout.write(
      JSON.stringify({
        level: 30,
        time: wallNow(),
        pid: process.pid,
        hostname: hostname(),
        event: 'instance.started' satisfies InstanceEvent,
        url,
        lines: lines.slice(1),
        msg: lines[0],
      }) + '\n',
    );
  else process.stdout.write(lines.join('\n') + '\n');
}

/**
 * `standin dashboard-link`: asks the instance these settings describe (its --host and --port, the admin
 * key by --admin-key-file or STANDIN_ADMIN_KEY_FILE) for a one-time dashboard sign-in link and prints it.
 */
async function dashboardLink(settings: Settings): Promise<number> {
  if (!settings.adminKey) throw new Error('dashboard-link needs the admin key: set STANDIN_ADMIN_KEY_FILE (or --admin-key-file)');
  const host = isUnspecified(settings.host) ? '127.0.0.1' : settings.host;
  const target = `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}/admin/v1/dashboard/sign_in_links`;
  const res = await fetch(target, { method: 'POST', headers: { authorization: `Bearer ${settings.adminKey}` } });
  const body = (await res.json().catch(() => ({}))) as { url?: string; error?: { message?: string } };
  if (res.status !== 201 || !body.url) throw new Error(`${target} answered ${res.status}: ${body.error?.message ?? 'no link'}`);
  process.stdout.write(`${body.url}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  // What follows `--` belongs to the command being run, flags included (`exec -- vitest --run`).
  const end = argv.indexOf('--');
  const after = end < 0 ? [] : argv.slice(end + 1);
  const { settings, rest } = readSettings(end < 0 ? argv : argv.slice(0, end));
  const [command = 'serve', ...args] = rest;
  const extra = commands();
  const help = ['help', '--help', '-h'];
  if (['--version', '-v', 'version'].includes(command)) {
    process.stdout.write(`standin ${version()}\n`);
    return 0;
  }
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
    case 'dashboard-link':
      return dashboardLink(settings);
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
