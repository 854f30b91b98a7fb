import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Settings } from '../core/settings.js';
import { startEphemeral, type Ephemeral } from './ephemeral.js';

/** Longest wait for Standin to stop after the command ended before exiting anyway. */
const STOP_GRACE_MS = 15_000;
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * `standin exec [options] -- <command…>`: Standin on a free port and a fresh store, the command run with
 * its URLs and keys in the environment, then Standin stopped. Resolves to the command's exit code.
 */
export async function runExec(settings: Settings, command: string[]): Promise<number> {
  if (!command.length) {
    process.stderr.write("standin exec: give the command to run after '--', e.g. standin exec -- npm test\n");
    return 2;
  }
  // A signal while Standin starts ends the run once it can be stopped cleanly (its store deleted).
  let interrupted: NodeJS.Signals | undefined;
  const early = (signal: NodeJS.Signals) => (interrupted = signal);
  for (const s of FORWARDED) process.on(s, early);
  let standin: Ephemeral;
  try {
    standin = await startEphemeral(settings);
  } finally {
    for (const s of FORWARDED) process.off(s, early);
  }
  let code: number;
  try {
    if (interrupted) return 128 + constants.signals[interrupted];
    process.stderr.write(`standin exec: Standin is listening on ${standin.url} (fresh store); running: ${command.join(' ')}\n`);
    code = await runCommand(command, { ...process.env, ...standin.env });
  } finally {
    await stop(standin);
  }
  return code;
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
 * `standin ephemeral`: the Standin of `exec` without a command, for test runners that start it themselves
 * (`standin/testing`). Prints one JSON line `{url, keys, env}` when ready; stops on SIGINT or SIGTERM, and,
 * with `--until-stdin-closes`, when its parent goes away (its stdin pipe closes).
 */
export async function runEphemeral(settings: Settings, args: string[]): Promise<number> {
  const unknown = args.filter((a) => a !== '--until-stdin-closes');
  if (unknown.length) {
    process.stderr.write(`standin ephemeral: unknown argument '${unknown[0]}'\n`);
    return 2;
  }
  // Listened for from the start: a stop asked for while Standin starts takes effect once it has.
  const stopped = new Promise<void>((resolve) => {
    for (const s of FORWARDED) process.once(s, () => resolve());
    if (args.includes('--until-stdin-closes')) {
      process.stdin.on('end', () => resolve());
      process.stdin.on('error', () => resolve());
      process.stdin.resume();
    }
  });
  const standin = await startEphemeral(settings);
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
