import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/**
 * A query built and compiled once per database, then run with fresh parameters: the delivery hot path
 * skips Kysely's per-call building and compiling. `build` receives sentinel values for the named
 * parameters; the compiled parameter list is mapped back to names, so any dialect's placeholders work.
 */
export function precompiled<A extends Record<string, unknown>, R>(names: readonly (keyof A & string)[], build: (db: Kysely<any>, args: A) => Compilable<R>) {
  // Each compiled parameter is a named argument, or a constant the builder wrote in.
  type Slot = { name: keyof A } | { value: unknown };
  const cache = new WeakMap<object, { compiled: CompiledQuery<R>; order: Slot[] }>();
  /** Compiles with (and caches per) `db`; runs on `exec` — `db` itself or a transaction of it. */
  return async (db: Kysely<any>, args: A, exec: Kysely<any> = db): Promise<R[]> => {
    let entry = cache.get(db);
    if (!entry) {
      const sentinels = Object.fromEntries(names.map((n, i) => [n, `\u0000param${i}\u0000`])) as unknown as A;
      const compiled = build(db, sentinels).compile();
      const order = compiled.parameters.map((p): Slot => {
        const m = typeof p === 'string' ? /^\u0000param(\d+)\u0000$/.exec(p) : null;
        return m ? { name: names[Number(m[1])] } : { value: p };
      });
      cache.set(db, (entry = { compiled, order }));
    }
    const { compiled, order } = entry;
    const result = await exec.executeQuery<R>({ ...compiled, parameters: order.map((slot) => ('name' in slot ? args[slot.name] : slot.value)) });
    return result.rows;
  };
}
