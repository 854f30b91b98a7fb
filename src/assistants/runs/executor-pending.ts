import type { CodeInterpreter } from '../../code-interpreter/types.js';

// TEMPORARY until branch `interp` is merged (its module declares this service): lets runs build against the interface.
declare module '../../core/module.js' {
  interface Services {
    codeInterpreter: CodeInterpreter;
  }
}
