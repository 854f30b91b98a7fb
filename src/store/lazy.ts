import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a package on first use instead of at start. Standin carries dependencies most runs never touch
 * (PostgreSQL and Redis clients, the tokenizer's tables, X.509 and MCP libraries); loading them all up
 * front was most of the cold start.
 */
export function lazy<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(name) as T);
}
