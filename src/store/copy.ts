import { CompiledQuery, type Compilable } from 'kysely';
import type pg from 'pg';

/**
 * Rows written with PostgreSQL's `COPY … FROM STDIN (FORMAT binary)`: one statement whatever their number,
 * each value sent as its bytes (no parameter per value to bind, no statement per number of rows). An
 * ingestion's text parts and chunks go so (vector-stores/store.ts): PostgreSQL spends less per row than on
 * a multi-row INSERT, and the server less to encode them (docs/files.md, "Stop 70").
 *
 * The statement is a Kysely query like any other, run on the transaction's connection: its one parameter
 * is the rows' bytes (`CopyData`), which the store's pool (db.ts) sends as the COPY's data.
 */
export class CopyData {
  /**
   * `messages`: the protocol's CopyData message holding the rows, then its CopyDone. `buffer`: the kept
   * buffer they were written in, if any, given back by `release`.
   */
  constructor(
    readonly messages: Buffer,
    private buffer?: Buffer,
  ) {}
  /** Sent already (copyIn): a CopyData goes once, since its buffer may hold another COPY's rows after. */
  sent = false;
  /** The rows in COPY's binary format, as the CopyData message holds them. */
  get bytes(): Buffer {
    return this.messages.subarray(5, this.messages.length - 5);
  }
  /** The bytes have left (the socket's write is done): their buffer may hold the next COPY's rows. */
  release(): void {
    const { buffer } = this;
    this.buffer = undefined;
    if (!buffer) return;
    if (kept.length < KEPT) kept.push(buffer);
    else {
      // Full: it takes the place of the smallest, if larger (small ones must not keep out the large).
      const i = smallest((b) => b.length < buffer.length);
      if (i >= 0) kept[i] = buffer;
    }
  }
}

/**
 * Buffers of COPYs whose bytes have left, for the next ones. A new buffer for each COPY was an
 * ArrayBuffer for each, which V8 counts toward the heap's growth: on PostgreSQL, the rows' bytes were about
 * a third of the server's new ArrayBuffers while it ingested (by their sizes), and a full collection came every 0.2 s
 * (docs/files.md, "Stop 79"). At most KEPT of them, none over KEPT_BYTES: 16 MiB held at most.
 */
const kept: Buffer[] = [];
const KEPT = 4;
const KEPT_BYTES = 4 << 20;

/** The buffers kept now (tests). */
export const keptCopyBuffers = (): readonly Buffer[] => kept;

/** The index of the smallest kept buffer that passes `fits`, or -1. */
function smallest(fits: (b: Buffer) => boolean): number {
  let at = -1;
  for (let i = 0; i < kept.length; i++) if (fits(kept[i]) && (at < 0 || kept[i].length < kept[at].length)) at = i;
  return at;
}

/** A buffer of at least `bound` bytes: the smallest kept one that holds them, or a new one (a power of two from 64 KiB, so it fits later COPYs too). */
function bufferFor(bound: number): { buffer: Buffer; keep: boolean } {
  const i = smallest((b) => b.length >= bound);
  if (i >= 0) return { buffer: kept.splice(i, 1)[0], keep: true };
  if (bound > KEPT_BYTES) return { buffer: Buffer.allocUnsafe(bound), keep: false };
  return { buffer: Buffer.allocUnsafe(Math.max(1 << 16, 2 ** Math.ceil(Math.log2(bound)))), keep: true };
}

/** The column types a copy writes, as PostgreSQL's binary format has them. */
export type CopyType = 'text' | 'int4' | 'bytea';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A value's bytes: one array, or pieces one after the other. */
type Bytes = Uint8Array | readonly Uint8Array[];
const bytesOf = (b: Bytes) => (b instanceof Uint8Array ? b.length : b.reduce((n, piece) => n + piece.length, 0));

/**
 * The binary COPY of `rows` (each a value a column, in `types`' order; null for NULL; a text as a string or
 * as its UTF-8; bytes, or a text's UTF-8, also as pieces to be written one after the other).
 */
export function copyData(types: readonly CopyType[], rows: readonly (readonly unknown[])[]): CopyData {
  // At most 3 bytes of UTF-8 a UTF-16 unit: one pass writes each string, into a buffer sized once.
  // The rows go in one CopyData message ('d', its length), followed by a CopyDone ('c', 4): copyIn writes them as they are.
  let bound = 5 + SIGNATURE.length + 8 + 2 + 5;
  for (const row of rows) {
    bound += 2 + 4 * types.length;
    for (let c = 0; c < types.length; c++) {
      const v = row[c];
      if (v === null) continue;
      bound += types[c] === 'int4' ? 4 : typeof v === 'string' ? 3 * v.length : bytesOf(v as Bytes);
    }
  }
  const { buffer: out, keep } = bufferFor(bound);
  out[0] = 0x64; // 'd'
  let at = 5 + SIGNATURE.copy(out, 5);
  at = out.writeInt32BE(0, at); // flags
  at = out.writeInt32BE(0, at); // header extension
  for (const row of rows) {
    at = out.writeInt16BE(types.length, at);
    for (let c = 0; c < types.length; c++) {
      const v = row[c];
      if (v === null) {
        at = out.writeInt32BE(-1, at);
      } else if (typeof v === 'string') {
        const length = out.write(v, at + 4, 'utf8');
        out.writeInt32BE(length, at);
        at += 4 + length;
      } else if (types[c] === 'int4') {
        at = out.writeInt32BE(4, at);
        at = out.writeInt32BE(v as number, at);
      } else {
        // bytea, or a text's UTF-8 as it is (PostgreSQL checks it, as it checks every text it is sent).
        const bytes = v as Bytes;
        at = out.writeInt32BE(bytesOf(bytes), at);
        for (const piece of bytes instanceof Uint8Array ? [bytes] : bytes) {
          out.set(piece, at);
          at += piece.length;
        }
      }
    }
  }
  at = out.writeInt16BE(-1, at);
  out.writeInt32BE(at - 1, 1);
  out[at] = 0x63; // 'c'
  at = out.writeInt32BE(4, at + 1);
  return new CopyData(out.subarray(0, at), keep ? out : undefined);
}

/** The COPY of `rows` into `table`'s `columns` (names Standin's own, never from input), as a statement to execute. */
export function copyStatement(
  table: string,
  columns: readonly string[],
  types: readonly CopyType[],
  rows: readonly (readonly unknown[])[],
): Compilable<unknown> {
  const query = CompiledQuery.raw(`COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT binary)`, [copyData(types, rows)]);
  return { compile: () => query };
}

/**
 * Runs a `COPY … FROM STDIN` on a connection of the pool, `data` its rows; resolves as pg's query does (the
 * rows copied as `rowCount`), rejects with PostgreSQL's error (the transaction is then aborted, as for any
 * failed statement).
 */
export function copyIn(client: pg.ClientBase, sql: string, data: CopyData): Promise<pg.QueryResult> {
  if (data.sent) return Promise.reject(new Error('a COPY statement runs once: its rows may have made way for another COPY'));
  data.sent = true;
  return new Promise((resolve, reject) => {
    let rowCount = 0;
    const copy = {
      callback: undefined as ((err: Error | null, res?: unknown) => void) | undefined,
      // The statement, its rows and their end leave in one write, without waiting for PostgreSQL's
      // CopyInResponse: a round trip, two wake-ups of each side and pg's copy of the rows saved. A COPY that
      // fails before taking data (no such table, a broken transaction) leaves its data to the backend,
      // which ignores CopyData and CopyDone outside a copy, as the protocol says (postgres.c).
      submit(connection: { query(text: string): void; stream: NodeJS.WritableStream & { cork(): void; uncork(): void } }) {
        connection.stream.cork();
        connection.query(sql);
        // Once written (or the connection gone), the rows' buffer serves the next COPY.
        connection.stream.write(data.messages, () => data.release());
        connection.stream.uncork();
      },
      handleCopyInResponse() {},
      handleCommandComplete(msg: { text?: string }) {
        rowCount = Number(/\d+$/.exec(msg.text ?? '')?.[0] ?? 0);
      },
      handleReadyForQuery() {
        const result = { command: 'COPY', rowCount, rows: [], fields: [], oid: 0 } as pg.QueryResult;
        // pg's read timeout wraps `callback`: called, it is cleared.
        copy.callback?.(null, result);
        resolve(result);
      },
      handleError(err: Error) {
        copy.callback?.(err);
        reject(err);
      },
      handleEmptyQuery() {},
      handleRowDescription() {},
      handleDataRow() {},
      handleCopyData() {},
    };
    client.query(copy as unknown as pg.Submittable);
  });
}
