/** The module of `source` (a path from the repository's root), as bytes; throws with asc's messages. */
export function compileWasm(source: string): Promise<Uint8Array>;
