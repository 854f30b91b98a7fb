/**
 * Reads of one key each, made in the same stretch of synchronous code (the handlers of jobs claimed
 * together, say), become one read of all their keys: one statement instead of one per key, and on
 * PostgreSQL one round trip (store/pipeline.ts). `read` answers rows for a list of keys; `keyOf` tells
 * which key a row belongs to. Each caller gets its own key's rows, or the read's error.
 */
export function groupRead<K, R>(read: (keys: K[]) => Promise<R[]>, keyOf: (row: R) => K, maxBatch = 128): (key: K) => Promise<R[]> {
  let waiting: { key: K; resolve(rows: R[]): void; reject(err: unknown): void }[] = [];

  function flush() {
    const batch = waiting;
    waiting = [];
    for (let i = 0; i < batch.length; i += maxBatch) {
      const part = batch.slice(i, i + maxBatch);
      read([...new Set(part.map((w) => w.key))]).then(
        (rows) => {
          const byKey = new Map<K, R[]>();
          for (const row of rows) {
            const k = keyOf(row);
            const list = byKey.get(k);
            if (list) list.push(row);
            else byKey.set(k, [row]);
          }
          for (const w of part) w.resolve(byKey.get(w.key) ?? []);
        },
        (err: unknown) => {
          for (const w of part) w.reject(err);
        },
      );
    }
  }

  return (key) =>
    new Promise<R[]>((resolve, reject) => {
      if (waiting.length === 0) queueMicrotask(flush);
      waiting.push({ key, resolve, reject });
    });
}
