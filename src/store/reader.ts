import type SQLite from 'better-sqlite3';

/** Characters of remembered column results at most (about 32 MB); past it they are all forgotten. */
const MAX_REMEMBERED = 32 * 1024 * 1024;

/**
 * The read connection of a SQLite store. Reads that need no transaction run on it synchronously (see
 * `precompiled`), off the writer connection's queue. With WAL it sees only committed data, never the
 * uncommitted state of a transaction open on the writer.
 *
 * The reads of one turn of the event loop share one read transaction: taking SQLite's shared lock per
 * statement costs more than a small read itself. Any statement on the writer ends that snapshot first
 * (the store calls `end` before each one), so a read that follows a commit of this process always sees
 * it; another process's commit shows at the latest one turn later.
 *
 * Column reads (`column`) are remembered until the database changes: each snapshot starts by reading
 * `PRAGMA data_version`, which changes with every commit of any other connection (this process's writer
 * included, and other processes), and a change forgets every remembered result. A remembered result is
 * therefore exactly what the snapshot would read, and a read that repeats between writes skips SQLite.
 * Results are remembered only from a version's second snapshot on: while every turn commits, nothing is.
 */
export class SnapshotReader {
  private open = false;
  private readonly statements = new Map<string, SQLite.Statement>();
  private readonly plucked = new Map<string, SQLite.Statement>();
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;
  private readonly dataVersion: SQLite.Statement;
  private version: unknown = null;
  /** Whether the database is unchanged since the previous snapshot. */
  private steady = false;
  /**
   * Results of column reads at `version`, by statement, then by each parameter in turn (a tree of maps: a
   * key made of the parameters, JSON text, was a string built and hashed at every read).
   */
  private readonly results = new Map<string, Remembered>();
  /** Characters held in `results`. */
  private remembered = 0;

  constructor(private readonly db: SQLite.Database) {
    this.begin = db.prepare('BEGIN');
    this.commit = db.prepare('COMMIT');
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  all<R>(sql: string, params: readonly unknown[]): R[] {
    return this.statement(this.statements, sql, false).all(params) as R[];
  }

  /**
   * The first column of every row: no row objects are built (a page of 20 reads in half the time). The
   * result is shared by every read of the same version of the database: it must not be changed.
   */
  column<V>(sql: string, params: readonly unknown[]): readonly V[] {
    const stmt = this.statement(this.plucked, sql, true);
    // While commits keep coming, remembering would only cost: results are kept from the second snapshot
    // of one version of the database on.
    if (!this.steady) return stmt.all(params) as V[];
    let node = this.nodeOf(sql, params);
    // A parameter that is an object (a Buffer) would be told apart by identity, not content: not remembered.
    if (!node) return stmt.all(params) as V[];
    let rows = node.rows;
    if (!rows) {
      rows = stmt.all(params) as readonly unknown[];
      let size = 0;
      for (const p of params) size += typeof p === 'string' ? p.length + 3 : 8;
      for (const v of rows) size += typeof v === 'string' ? v.length : 8;
      if (this.remembered + size > MAX_REMEMBERED) {
        this.forget();
        node = this.nodeOf(sql, params)!;
      }
      this.remembered += size;
      node.rows = rows;
    }
    return rows as readonly V[];
  }

  /** The node of this statement and these parameters in `results`, made if new; undefined for an object parameter. */
  private nodeOf(sql: string, params: readonly unknown[]): Remembered | undefined {
    let node = this.results.get(sql);
    if (!node) this.results.set(sql, (node = { rows: undefined, next: undefined }));
    for (let i = 0; i < params.length; i++) {
      const p = params[i];
      if (typeof p === 'object' && p !== null) return undefined;
      node.next ??= new Map();
      let child = node.next.get(p);
      if (!child) node.next.set(p, (child = { rows: undefined, next: undefined }));
      node = child;
    }
    return node;
  }

  private forget(): void {
    this.results.clear();
    this.remembered = 0;
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
      const version = this.dataVersion.get();
      this.steady = version === this.version;
      if (!this.steady) {
        this.version = version;
        if (this.remembered) this.forget();
      }
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

/** Remembered column results: those of the parameters that lead here, and the next parameter's nodes. */
interface Remembered {
  rows: readonly unknown[] | undefined;
  next: Map<unknown, Remembered> | undefined;
}
