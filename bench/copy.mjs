// A binary COPY as an ingestion writes one (src/store/copy.ts), two ways on one PostgreSQL connection,
// alternating: "reply first", as pg does a COPY (the statement, then PostgreSQL's CopyInResponse, then the
// rows and their end in two more writes, copied into pg's buffer), and "one write" (the statement, the rows
// and their end sent together, as copyIn does since stop 73). Each round: BEGIN, the COPY of a 512 KB
// file's text parts and of its chunks' rows (330 rows: two ids, a token count, a 1 KB vector), COMMIT.
// Reports, per file: wall time, this process's CPU and PostgreSQL's.
// Run: node bench/copy.mjs   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//      BENCH_COPY_FILES (400) files a way; a table of its own, dropped after)
import { resolve } from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { cpuMs, importTree, postgresCpu, report } from './lib.mjs';

const tree = resolve('.');
const { copyData, copyIn } = await importTree(build, tree, resolve('node_modules/.cache/standin-bench-copy'), (src) => [
  `export { copyData, copyIn } from ${src('store/copy.ts')};`,
]);

const URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const FILES = Number(process.env.BENCH_COPY_FILES ?? 400);
const table = `bench_copy_${process.pid}`;

const client = new pg.Client({ connectionString: URL });
await client.connect();
await client.query(`CREATE TABLE ${table}_texts (id int, part int, body text, PRIMARY KEY (id, part))`);
await client.query(`CREATE TABLE ${table}_chunks (id int, seq int, tokens int, vector bytea, PRIMARY KEY (id, seq))`);

const words = 'the of and a to in is for on that with as by at from'.split(' ');
const text = Array.from({ length: 90_000 }, (_, i) => words[(i * 7) % words.length]).join(' ');
const vector = Buffer.alloc(1024, 7);
const rowsOf = (id) => ({
  texts: copyData(
    ['int4', 'int4', 'text'],
    [0, 1].map((part) => [id, part, text.slice(part * 250_000, (part + 1) * 250_000)]),
  ),
  chunks: copyData(
    ['int4', 'int4', 'int4', 'bytea'],
    Array.from({ length: 330 }, (_, seq) => [id, seq, 800, vector]),
  ),
});

/** pg's own way: the rows sent when PostgreSQL asks for them. */
function replyFirst(sql, data) {
  return new Promise((resolve, reject) => {
    client.query({
      submit: (c) => c.query(sql),
      handleCopyInResponse: (c) => {
        c.sendCopyFromChunk(data.bytes);
        c.endCopyFrom();
      },
      handleReadyForQuery: resolve,
      handleError: reject,
      handleCommandComplete() {},
      handleEmptyQuery() {},
      handleRowDescription() {},
      handleDataRow() {},
      handleCopyData() {},
    });
  });
}

// copyIn's way: the statement, the rows and their end in one write.
const ways = { 'reply first': replyFirst, 'one write': (sql, data) => copyIn(client, sql, data) };
const totals = Object.fromEntries(Object.keys(ways).map((w) => [w, { wall: 0, cpu: 0, pg: 0, n: 0 }]));
let id = 0;
try {
  for (let round = 0; round < 8; round++) {
    for (const [name, copy] of round % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      const files = Array.from({ length: FILES / 8 }, () => rowsOf(id++));
      const [c0, p0, t0] = [cpuMs(process.pid), postgresCpu(), performance.now()];
      for (const f of files) {
        await client.query('BEGIN');
        await copy(`COPY ${table}_texts (id, part, body) FROM STDIN (FORMAT binary)`, f.texts);
        await copy(`COPY ${table}_chunks (id, seq, tokens, vector) FROM STDIN (FORMAT binary)`, f.chunks);
        await client.query('COMMIT');
      }
      const t = totals[name];
      t.wall += performance.now() - t0;
      t.cpu += cpuMs(process.pid) - c0;
      t.pg += postgresCpu() - p0;
      t.n += files.length;
    }
  }
} finally {
  await client.query(`DROP TABLE ${table}_texts, ${table}_chunks`);
  await client.end();
}
const per = (v, n) => (v / n).toFixed(3);
report(
  'copy',
  Object.entries(totals).map(([way, t]) => ({
    way,
    'wall ms per file': per(t.wall, t.n),
    'this process CPU ms per file': per(t.cpu, t.n),
    'PostgreSQL CPU ms per file': per(t.pg, t.n),
  })),
  [`${FILES} files a way, in 8 rounds alternating; each file: BEGIN, two COPYs (about 512 KB of text, 330 rows of 1 KB), COMMIT.`],
);
