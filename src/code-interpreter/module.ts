import { configSection, type Module } from '../core/module.js';
import { CodeInterpreterConfig } from './config.js';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

declare module '../core/module.js' {
  interface Services {
    /** Runs Python for the code_interpreter tool: one sandboxed session per thread. */
    codeInterpreter: CodeInterpreterRuntime;
  }
}

/**
 * The code_interpreter executor: Python (Pyodide, WebAssembly) in worker threads, one session per key.
 * No routes: runs call `ctx.services.codeInterpreter`. Configured by the root `code_interpreter` section.
 */
export const codeInterpreterModule: Module = {
  name: 'code_interpreter',
  provide(ctx) {
    ctx.services.codeInterpreter = createCodeInterpreter(() => ctx.clock.now(), ctx.log);
  },
  config: [
    configSection({
      at: 'root',
      key: 'code_interpreter',
      schema: CodeInterpreterConfig,
      async apply(ctx, _tx, value) {
        await ctx.services.codeInterpreter.configure(value);
      },
    }),
  ],
  start(ctx) {
    // Never on the start path: once Standin listens, and only when the config asks for it.
    ctx.services.codeInterpreter.started();
  },
  async stop(ctx) {
    await ctx.services.codeInterpreter.close();
  },
};
