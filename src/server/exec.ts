import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Settings } from '../core/settings.js';
import { startEphemeral, type Ephemeral } from './ephemeral.js';

/** Longest wait for Standin to stop after the command ended before exiting anyway. */
const STOP_GRACE_MS = 15_000;
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The options of `exec` and `ephemeral` themselves (every other one is a setting of `serve`). */
interface RunOptions {
  import?: string;
  exportOnExit?: string;
  untilStdinCloses?: boolean;
}

const VALUED = { '--import': 'import', '--export-on-exit': 'exportOnExit' } as const;

/** Reads the command's own options from `args`; a string is the usage error to print. */
function runOptions(name: 'exec' | 'ephemeral', args: string[], allowed: (keyof RunOptions)[]): RunOptions | string {
  const out: RunOptions = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2) as [string, string | undefined];
    const key = flag === '--until-stdin-closes' ? 'untilStdinCloses' : VALUED[flag as keyof typeof VALUED];
    if (!key || !allowed.includes(key)) {
      return name === 'exec' && !args[i].startsWith('-')
        ? `unexpected '${args[i]}': the command goes after '--' (standin exec -- npm test)`
        : `unknown argument '${args[i]}'`;
    }
    if (key === 'untilStdinCloses') {
      out.untilStdinCloses = true;
      continue;
    }
    const value = inline ?? args[++i];
    if (!value) return `${flag} needs a file`;
    out[key] = value;
  }
  return out;
}

/**
 * `standin exec [--import FILE] [--export-on-exit FILE] [options] -- <command…>`: Standin on a free port
 * and a fresh store (or a snapshot's state), the command run with its URLs and keys in the environment,
 * the state written to a snapshot when asked, then Standin stopped. Resolves to the command's exit code.
 */
export async function runExec(settings: Settings, args: string[], command: string[]): Promise<number> {
  const opts = runOptions('exec', args, ['import', 'exportOnExit']);
  const usage = (message: string) => (process.stderr.write(`standin exec: ${message}\n`), 2);
  if (typeof opts === 'string') return usage(opts);
  if (!command.length) return usage("give the command to run after '--', e.g. standin exec -- npm test");
  // Found out before the command runs for minutes, not after.
  if (opts.exportOnExit && !existsSync(dirname(resolve(opts.exportOnExit))))
    return usage(`--export-on-exit ${opts.exportOnExit}: the folder ${dirname(resolve(opts.exportOnExit))} does not exist`);
  // A signal while Standin starts ends the run once it can be stopped cleanly (its store deleted).
  let interrupted: NodeJS.Signals | undefined;
  const early = (signal: NodeJS.Signals) => (interrupted = signal);
  for (const s of FORWARDED) process.on(s, early);
  let standin: Ephemeral;
  try {
    standin = await startEphemeral(settings, { import: opts.import });
  } finally {
    for (const s of FORWARDED) process.off(s, early);
  }
  let code: number;
  try {
    if (interrupted) return 128 + constants.signals[interrupted];
    const from = opts.import ? `the state of ${opts.import}` : 'fresh store';
    process.stderr.write(`standin exec: Standin is listening on ${standin.url} (${from}); running: ${command.join(' ')}\n`);
    code = await runCommand(command, { ...process.env, ...standin.env });
    if (opts.exportOnExit) code = await exportOnExit(standin, opts.exportOnExit, code);
  } finally {
    await stop(standin);
  }
  return code;
}

/**
 * Writes the state the command left, whatever its exit code (a failed run's state is the one worth
 * looking at). An export that fails turns a success into exit 1: the file a later step needs is missing.
 */
async function exportOnExit(standin: Ephemeral, path: string, code: number): Promise<number> {
  try {
    const t = await standin.exportTo(path);
    process.stderr.write(`standin exec: exported ${t.tables} tables, ${t.rows} rows, ${t.files} files (${t.bytes} bytes) to ${path}\n`);
    return code;
  } catch (err) {
    process.stderr.write(`standin exec: could not export to ${path}: ${(err as Error).message}\n`);
    return code === 0 ? 1 : code;
  }
}

/**
 * Runs the command with the signals this process receives passed on to it. One argument is a shell
 * command line (`standin exec -- "npm test && npm run e2e"`), several are the program and its arguments.
 * Resolves to its exit code, 128 + the signal's number when a signal ended it (as a shell reports it).
 */
function runCommand(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [program, ...args] = command;
  const child =
    command.length === 1 ? spawn(program, { stdio: 'inherit', env, shell: true }) : spawn(program, args, { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const s of FORWARDED) process.on(s, forward);
  return new Promise((resolve) => {
    const done = (code: number) => {
      for (const s of FORWARDED) process.off(s, forward);
      resolve(code);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      process.stderr.write(`standin exec: cannot run '${program}': ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
      // 127 and 126 are what a shell answers for a command it cannot find or run.
      done(err.code === 'ENOENT' ? 127 : 126);
    });
    child.on('exit', (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}

/**
 * `standin ephemeral [--import FILE]`: the Standin of `exec` without a command, for test runners that start
 * it themselves (`standin/testing`). Prints one JSON line `{url, keys, env}` when ready; stops on SIGINT or
 * SIGTERM, and, with `--until-stdin-closes`, when its parent goes away (its stdin pipe closes).
 */
export async function runEphemeral(settings: Settings, args: string[]): Promise<number> {
  const opts = runOptions('ephemeral', args, ['import', 'untilStdinCloses']);
  if (typeof opts === 'string') {
    process.stderr.write(`standin ephemeral: ${opts}\n`);
    return 2;
  }
  // Listened for from the start: a stop asked for while Standin starts takes effect once it has.
  const stopped = new Promise<void>((resolve) => {
    for (const s of FORWARDED) process.once(s, () => resolve());
    if (opts.untilStdinCloses) {
      process.stdin.on('end', () => resolve());
      process.stdin.on('error', () => resolve());
      process.stdin.resume();
    }
  });
  const standin = await startEphemeral(settings, { import: opts.import });
  process.stdout.write(JSON.stringify({ url: standin.url, keys: standin.keys, env: standin.env }) + '\n');
  await stopped;
  process.stdin.pause();
  await stop(standin);
  return 0;
}

/** Stops Standin and deletes its store; a stop that hangs does not hold the exit code back. */
async function stop(standin: Ephemeral): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      process.stderr.write('standin: Standin did not stop in time; exiting anyway\n');
      resolve();
    }, STOP_GRACE_MS);
  });
  await Promise.race([standin.close(), late]);
  clearTimeout(timer);
}
