import v8 from 'node:v8';

/**
 * V8's optimizing compiler (TurboFan) held off while Standin starts. A start runs most of its code once
 * (building route schemas, registering routes, the store's first queries); optimizing what turns hot there
 * is work on V8's compiler threads that the start pays for and that no later request uses: about a tenth
 * of a cold start's CPU (bench/cold-start.mjs). Baseline code (Sparkplug) is kept. Optimization resumes
 * once the instance listens (`resumeOptimizing`), or after `fallbackMs` in a process that never does; the
 * request path is then optimized as it turns hot, as in any process.
 *
 * Left alone when Node was started with a flag of its own for it (`--no-opt`, `--turbofan`, …).
 */
export function holdOptimizing(fallbackMs = 10_000, nodeFlags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ')): void {
  if (held || /--(no-)?(opt|turbofan|always-turbofan)\b/.test(nodeFlags)) return;
  v8.setFlagsFromString('--no-turbofan');
  held = true;
  setTimeout(resumeOptimizing, fallbackMs).unref();
}

/** Lets V8 optimize again (the start is over). Does nothing unless `holdOptimizing` held it off. */
export function resumeOptimizing(): void {
  if (!held) return;
  held = false;
  v8.setFlagsFromString('--turbofan');
}

/** Whether optimization is held off now. */
export const optimizingHeld = (): boolean => held;

let held = false;
