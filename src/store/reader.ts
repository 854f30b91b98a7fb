import type SQLite from 'better-sqlite3';

/**
 * The read connection of a SQLite store. Reads that need no transaction run on it synchronously (see
 * `precompiled`), off the writer connection's queue. With WAL it sees only committed data, never the
 * uncommitted state of a transaction open on the writer.
 *
 * The reads of one turn of the event loop share one read transaction: taking SQLite's shared lock per
 * statement costs more than a small read itself. Any statement on the writer ends that snapshot first
 * (the store calls `end` before each one), so a read that follows a commit of this process always sees
 * it; another process's commit shows at the latest one turn later.
 */
export class SnapshotReader {
  private open = false;
  private readonly statements = new Map<string, SQLite.Statement>();
  private readonly plucked = new Map<string, SQLite.Statement>();
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;

  constructor(private readonly db: SQLite.Database) {
    this.begin = db.prepare('BEGIN');
    this.commit = db.prepare('COMMIT');
  }

  all<R>(sql: string, params: readonly unknown[]): R[] {
    return this.statement(this.statements, sql, false).all(params) as R[];
  }

  /** The first column of every row: no row objects are built (a page of 20 reads in half the time). */
  column<V>(sql: string, params: readonly unknown[]): V[] {
    return this.statement(this.plucked, sql, true).all(params) as V[];
  }

  private statement(cache: Map<string, SQLite.Statement>, sql: string, pluck: boolean): SQLite.Statement {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size > 2000) cache.clear();
      cache.set(sql, (stmt = this.db.prepare(sql).pluck(pluck)));
    }
    if (!this.open) {
      this.begin.run();
      this.open = true;
      setImmediate(this.end);
    }
    return stmt;
  }

  /** Ends the snapshot; the next read starts a fresh one. */
  readonly end = (): void => {
    if (!this.open) return;
    this.open = false;
    this.commit.run();
  };

  close(): void {
    this.end();
    this.db.close();
  }
}
