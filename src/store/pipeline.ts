import type pg from 'pg';

/** Distinct statements prepared by name at most; past it, new ones run unnamed (parsed each time). */
const MAX_NAMED = 2000;
/** A retired connection stays open this long for the statements in flight on it (longer than a statement's timeout). */
const RETIRED_FOR = 35_000;
/** Characters of remembered column results at most (about 32 MB); past it they are all forgotten. */
const MAX_REMEMBERED = 32 * 1024 * 1024;
/**
 * What the database shows a statement: two equal snapshots see the same committed data, and a snapshot
 * changes whenever any transaction ends (it is the set of transactions still running, and the first not
 * yet ended). PostgreSQL's counterpart of SQLite's `PRAGMA data_version`, for every instance at once.
 */
const SNAPSHOT = 'select pg_current_snapshot()::text';

/**
 * PostgreSQL's counterpart of the SQLite read connection (store/reader.ts): statements that need no
 * transaction run here, on a few connections in pipeline mode, instead of taking a pool connection each.
 *
 * One round trip per request was the ceiling through the pool: each query waited for a connection, was
 * written on its own and answered before that connection served another. Here every statement of one turn
 * of the event loop is written to one connection in a single write (the socket is corked for the turn),
 * PostgreSQL answers them in order, and identical reads of the turn (same statement, same parameters) are
 * sent once and share the answer. Successive turns go to the next connection, so PostgreSQL works on
 * several at once.
 *
 * Each statement is followed by its own Sync: it is its own implicit transaction, so one failing
 * statement fails alone, a write is committed when its answer arrives (never acknowledged before), and a
 * read sees every commit that finished before it was sent — a write acknowledged by any instance is
 * visible to a read sent after that acknowledgement.
 *
 * Column reads (`column`) are remembered across turns while the database does not change. A turn that
 * reads columns first reads the database's snapshot (`SNAPSHOT`), on its connection ahead of its reads; a
 * result is remembered with the snapshot read before it, and served again only to a turn whose own
 * snapshot, read after the request began, is the same one: no transaction ended in between, on any
 * instance, so it is exactly what the read would answer. A served result thus costs the turn's one small
 * snapshot query instead of PostgreSQL running the read and sending its rows. Results are remembered only
 * while the snapshot holds from one turn to the next; while commits keep coming, nothing is.
 */
export class Pipeline {
  private readonly clients: (pg.Client | undefined)[];
  private next = 0;
  /** The connection of the current turn, corked until the turn ends. */
  private current: pg.Client | undefined;
  /** Reads of the current turn, by statement and parameters. */
  private readonly shared = new Map<string, Promise<pg.QueryArrayResult | pg.QueryResult>>();
  private readonly names = new Map<string, string>();
  private closed = false;
  /** The snapshot of the current turn, read ahead of its column reads; null if it could not be read. */
  private snapshot: Promise<string | null> | undefined;
  /** The snapshot last seen, and whether it was the same as the one before it. */
  private lastSnapshot: string | null = null;
  private steady = false;
  /** Column results, with the snapshot they were read at, by statement and parameters. */
  private readonly remembered = new Map<string, { at: string; rows: readonly unknown[] }>();
  private rememberedSize = 0;
  /** Statements sent so far (for tests and benches). */
  sent = 0;

  constructor(
    private readonly connect: () => pg.Client,
    connections: number,
  ) {
    this.clients = new Array<pg.Client | undefined>(Math.max(1, connections)).fill(undefined);
  }

  /** Runs one statement; its rows as objects. */
  rows<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.run(sql, params, false).then((r) => r.rows as R[]);
  }

  /**
   * Runs one statement; the first column of each row. The result may be remembered and shared with later
   * identical reads: it is not to be changed.
   */
  column<V>(sql: string, params: readonly unknown[]): Promise<readonly V[]> {
    const key = `${sql}\u0000${JSON.stringify(params)}`;
    const hit = this.steady ? this.remembered.get(key) : undefined;
    const snapshot = this.turnSnapshot();
    const read = () => this.run(sql, params, true).then((r) => (r.rows as unknown[][]).map((row) => row[0] as V));
    // A remembered result is served if nothing changed since it was read, else read again (a second round trip).
    if (hit) return snapshot.then((at) => (at === hit.at ? (hit.rows as readonly V[]) : read()));
    return Promise.all([snapshot, read()]).then(([at, rows]) => {
      if (at !== null && this.steady && at === this.lastSnapshot) this.remember(key, at, rows);
      return rows;
    });
  }

  /** The current turn's snapshot, read (once per turn) ahead of the reads that follow it on the turn's connection. */
  private turnSnapshot(): Promise<string | null> {
    this.turn();
    return (this.snapshot ??= this.send(SNAPSHOT, [], true).then(
      (r) => this.seen(String((r.rows as unknown[][])[0][0])),
      () => null,
    ));
  }

  /** Notes a turn's snapshot: a change forgets every remembered result (none can be served again). */
  private seen(at: string): string {
    this.steady = at === this.lastSnapshot;
    if (!this.steady) {
      this.lastSnapshot = at;
      this.remembered.clear();
      this.rememberedSize = 0;
    }
    return at;
  }

  private remember(key: string, at: string, rows: readonly unknown[]): void {
    let size = key.length;
    for (const v of rows) size += typeof v === 'string' ? v.length : 8;
    if (this.rememberedSize + size > MAX_REMEMBERED) {
      this.remembered.clear();
      this.rememberedSize = 0;
    }
    this.rememberedSize += size;
    this.remembered.set(key, { at, rows });
  }

  /** Runs a statement that changes data, on its own (never shared with an identical one). */
  write(sql: string, params: readonly unknown[]): Promise<number> {
    return this.send(sql, params, false).then((r) => r.rowCount ?? 0);
  }

  /** Runs a statement on its own (never shared with an identical one); its rows as objects (`RETURNING`). */
  returning<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.send(sql, params, false).then((r) => r.rows as R[]);
  }

  /**
   * Runs statements as one transaction without waiting between them: BEGIN, the statements and COMMIT are
   * written back to back on the turn's connection (nothing else can come between them: they are queued in
   * one go), so the transaction costs one round trip. Resolves once committed, with each statement's rows;
   * if one statement fails, PostgreSQL rolls the whole transaction back and this rejects with that
   * statement's error.
   */
  async transaction(statements: readonly { sql: string; parameters: readonly unknown[] }[]): Promise<unknown[][]> {
    const sent = [
      this.send('BEGIN', [], false),
      ...statements.map((s) => this.send(s.sql, s.parameters, false)),
      this.send('COMMIT', [], false),
    ];
    const settled = await Promise.allSettled(sent);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    // After a failed statement COMMIT answers ROLLBACK; a rejection above reports that case already.
    const commit = settled[settled.length - 1] as PromiseFulfilledResult<pg.QueryResult>;
    if (commit.value.command !== 'COMMIT') throw new Error(`the transaction ended with ${commit.value.command}`);
    return settled.slice(1, -1).map((r) => (r as PromiseFulfilledResult<pg.QueryResult>).value.rows as unknown[]);
  }

  private run(sql: string, params: readonly unknown[], array: boolean): Promise<pg.QueryArrayResult | pg.QueryResult> {
    const key = `${array ? 'a' : 'o'}${sql}\u0000${JSON.stringify(params)}`;
    let pending = this.shared.get(key);
    if (!pending) {
      pending = this.send(sql, params, array);
      this.shared.set(key, pending);
    }
    return pending;
  }

  private send(sql: string, params: readonly unknown[], array: boolean): Promise<pg.QueryArrayResult | pg.QueryResult> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const client = this.turn();
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < MAX_NAMED) this.names.set(sql, (name = `standin_${this.names.size}`));
    const config = { text: sql, values: params as unknown[], name, ...(array ? { rowMode: 'array' as const } : {}) };
    this.sent++;
    const sent = client.query(config);
    if (name === undefined) return sent;
    return sent.catch((err: unknown) => {
      // A table changed under a prepared statement (another instance's newer migration): PostgreSQL refuses
      // it on this connection from then on. The connection is replaced; this statement alone fails.
      if ((err as { code?: string }).code === '0A000') this.retire(client);
      throw err;
    });
  }

  /** New turns go to a new connection; this one ends once what is in flight on it is done (every statement has a timeout). */
  private retire(client: pg.Client): void {
    const i = this.clients.indexOf(client);
    if (i < 0) return;
    this.clients[i] = undefined;
    this.retired.add(client);
    setTimeout(() => {
      this.retired.delete(client);
      void client.end().catch(() => undefined);
    }, RETIRED_FOR).unref();
  }
  /** Connections retired and not yet ended (ended at close too). */
  private readonly retired = new Set<pg.Client>();

  /** The connection of this turn: corked, so the turn's statements leave in one write when it ends. */
  private turn(): pg.Client {
    if (this.current) return this.current;
    const i = this.next;
    this.next = (i + 1) % this.clients.length;
    let client = this.clients[i];
    if (!client) client = this.clients[i] = this.open(i);
    this.current = client;
    client.connection.stream.cork();
    setImmediate(this.endTurn);
    return client;
  }

  private readonly endTurn = () => {
    const client = this.current;
    this.current = undefined;
    this.snapshot = undefined;
    this.shared.clear();
    // A connection that broke meanwhile has been dropped; uncorking it is harmless.
    client?.connection.stream.uncork();
  };

  private open(i: number): pg.Client {
    const client = this.connect();
    const drop = () => {
      if (this.clients[i] === client) this.clients[i] = undefined;
    };
    // A broken connection fails the statements in flight on it (pg rejects each) and is replaced on next use.
    client.on('error', drop);
    client.on('end', drop);
    client.connect().catch(drop);
    return client;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.endTurn();
    const clients = [...this.clients.splice(0).filter((c) => c !== undefined), ...this.retired];
    this.retired.clear();
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}
