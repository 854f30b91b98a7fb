import { join } from 'node:path';
import { invalid } from '../core/errors.js';
import { configSection, type Module } from '../core/module.js';
import { CodeInterpreterConfig, ExecutorView } from './config.js';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

declare module '../core/module.js' {
  interface Services {
    /** Runs Python for the code_interpreter tool: one sandboxed session per thread. */
    codeInterpreter: CodeInterpreterRuntime;
  }
}

/**
 * The code_interpreter executor: Python (bwrap's CPython, or Pyodide in worker threads), one session per key.
 * Runs call `ctx.services.codeInterpreter`; `GET /admin/v1/code_interpreter` says which executor and packages.
 * Configured by the root `code_interpreter` section.
 */
export const codeInterpreterModule: Module = {
  name: 'code_interpreter',
  provide(ctx) {
    // Verified packages are cached in the data folder; with no data folder (':memory:') in memory only.
    const cacheDir = ctx.settings.data === ':memory:' ? undefined : join(ctx.settings.data, 'pyodide-packages');
    ctx.services.codeInterpreter = createCodeInterpreter(() => ctx.clock.now(), ctx.log, {}, { cacheDir });
    // The sandbox probe runs in a child process while the rest of Standin starts; start() waits for it.
    void ctx.services.codeInterpreter.prepare();
  },
  config: [
    configSection({
      at: 'root',
      key: 'code_interpreter',
      schema: CodeInterpreterConfig,
      async apply(ctx, _tx, value) {
        try {
          await ctx.services.codeInterpreter.configure(value);
        } catch (err) {
          // A rule the schema cannot state (the bwrap executor on a machine without it, a relative `packages`): a 400.
          const message = (err as Error).message;
          const param = message.startsWith('packages') ? 'code_interpreter.packages' : 'code_interpreter.executor';
          throw invalid(`the config is not valid: ${param}: ${message}`, param, 'invalid_config');
        }
      },
      controlPlaneProblems(value) {
        const onDisk = 'is read only from the config file Standin starts with (--config)';
        return [
          ...(value.packages !== undefined && !/^https?:\/\//i.test(value.packages)
            ? [`code_interpreter.packages: a local folder or file URL ${onDisk}; the control plane takes an http(s) mirror`]
            : []),
          ...(value.package_lock !== undefined ? [`code_interpreter.package_lock: a file on the server ${onDisk}`] : []),
        ];
      },
    }),
  ],
  async start(ctx) {
    await ctx.services.codeInterpreter.prepare();
    // Never on the start path: once Standin listens, and only when the config asks for it.
    ctx.services.codeInterpreter.started();
    ctx.banner.push(`  code interpreter: ${ctx.services.codeInterpreter.describe().description}`);
  },
  adminRoutes(app, ctx) {
    app.get(
      '/code_interpreter',
      { schema: { summary: 'The code interpreter executor and the packages it offers', response: { 200: ExecutorView } } },
      async () => ctx.services.codeInterpreter.describe(),
    );
  },
  async stop(ctx) {
    await ctx.services.codeInterpreter.close();
  },
};
