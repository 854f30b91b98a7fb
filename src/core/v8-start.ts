import v8 from 'node:v8';

/**
 * V8 tuned for Standin's start, and back to Node's defaults once the instance listens
 * (`endV8StartTuning`), or after `fallbackMs` in a process that never does. Measured with
 * bench/cold-start.mjs, each about a tenth of a cold start's CPU:
 * - The optimizing compiler (TurboFan) is held off. A start runs most of its code once (building route
 *   schemas, registering routes, the store's first queries); optimizing what turns hot there is work on
 *   V8's compiler threads that no later request uses. Baseline code (Sparkplug) is kept; afterwards the
 *   request path is optimized as it turns hot, as in any process.
 * - The young generation grows by 4 rather than 2 at a time: a start allocates tens of MB, most of it kept
 *   (schemas, routes, modules), and from 1 MB a doubling young generation scavenges (copies what lives)
 *   many times on its way to the size it reaches anyway under load. Its limit is unchanged. By 8 it was
 *   20 ms less CPU where page faults are cheap, and 40 ms more where each costs 8.6 µs: a larger young
 *   generation touches more new pages (docs/operations.md, stop 47).
 *
 * Left alone when Node was started with a flag of its own for either (`--no-opt`, `--turbofan`,
 * `--semi-space-growth-factor`, …).
 */
export function tuneV8ForStart(fallbackMs = 10_000, nodeFlags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ')): void {
  if (state.on) return;
  const chosen: [during: string, after: string][] = [];
  if (!/--(no-)?(opt|turbofan|always-turbofan)\b/.test(nodeFlags)) chosen.push(['--no-turbofan', '--turbofan']);
  if (!/--semi-space-growth-factor\b/.test(nodeFlags)) chosen.push(['--semi-space-growth-factor=4', '--semi-space-growth-factor=2']);
  if (!chosen.length) return;
  for (const [during] of chosen) v8.setFlagsFromString(during);
  Object.assign(state, { chosen, on: true });
  setTimeout(endV8StartTuning, fallbackMs).unref();
}

/** Node's defaults again (the start is over). Does nothing unless `tuneV8ForStart` changed them. */
export function endV8StartTuning(): void {
  if (!state.on) return;
  state.on = false;
  for (const [, after] of state.chosen) v8.setFlagsFromString(after);
}

/** The flags tuned for the start now (none once it is over). */
export const v8StartTuning = (): string[] => (state.on ? state.chosen.map(([during]) => during) : []);

/** `fn` under the start's flags (again, if the start is over): for a code cache the next start can use (core/code-cache.ts). */
export function underStartTuning<T>(fn: () => T): T {
  if (state.on) return fn();
  for (const [during] of state.chosen) v8.setFlagsFromString(during);
  try {
    return fn();
  } finally {
    for (const [, after] of state.chosen) v8.setFlagsFromString(after);
  }
}

/**
 * The flags chosen for the last start (each with Node's default to go back to), and whether they are in force.
 * On the global object: the entry (dist/main.js) tunes, the server's script (dist/standin.cjs, another
 * bundle with its own copy of this module) ends the tuning once it listens.
 */
const state = ((globalThis as Record<symbol, unknown>)[Symbol.for('standin.v8StartTuning')] ??= {
  chosen: [],
  on: false,
}) as { chosen: [during: string, after: string][]; on: boolean };
