import OpenAI from 'openai';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, dialects, startTestStandin, testSchemaName, type TestStandin } from '../helpers.js';
import { startReceiver } from '../webhooks/receiver.js';

/**
 * A soak in simulated time: the same traffic every day (webhook events to a good and a failing receiver,
 * runs on fresh threads, refused token exchanges, image audit requests), the Standin clock moved a day, the
 * job queue drained (the retention job among the rest). The tables retention covers, and the database as a
 * whole, stop growing once the keep times are reached, while the traffic goes on.
 */
const DAYS = 14;
const TABLES = [
  'webhook_deliveries',
  'webhook_attempts',
  'events',
  'run_events',
  'workload_exchanges',
  'image_audit_requests',
  'jobs',
] as const;
type Table = (typeof TABLES)[number];

describe.each(dialects())('retention soak (%s)', (dialect) => {
  let s: TestStandin;
  let url: string;
  let client: OpenAI;
  let ok: Awaited<ReturnType<typeof startReceiver>>;
  let failing: Awaited<ReturnType<typeof startReceiver>>;

  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;

  beforeAll(async () => {
    // A database of its own on PostgreSQL: VACUUM keeps dead rows any open snapshot of the same database
    // may still see, and the other test files' transactions would hold them (snapshots of other databases
    // do not count).
    if (dialect === 'postgres') database = await ownDatabase();
    // A receiver slowed by a busy machine must not turn into retries (and duplicates) here.
    s = await startTestStandin({ dialect, settings: { webhookTimeoutMs: 10_000, ...(database ? { databaseUrl: database.url } : {}) } });
    url = await s.listen();
    client = new OpenAI({
      apiKey: s.keys.platform,
      baseURL: `${url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' },
    });
    ok = await startReceiver();
    failing = await startReceiver(() => ({ status: 503, body: 'down' }));
  });
  afterAll(async () => {
    await ok?.close();
    await failing?.close();
    await s?.close();
    await database?.drop();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${s.keys.admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    expect(res.status, JSON.stringify(json)).toBeLessThan(300);
    return json;
  };
  const count = (table: Table) => countRows(s, table);
  /**
   * Bytes the data takes: SQLite's pages (it reuses freed pages itself); PostgreSQL's tables and indexes of
   * this schema (their main forks: the free space and visibility maps a first VACUUM adds are not data).
   */
  const size = async () => {
    if (s.ctx.store.dialect === 'sqlite') {
      const pages = await sql<{ page_count: number }>`PRAGMA page_count`.execute(s.ctx.store.db);
      const pageSize = await sql<{ page_size: number }>`PRAGMA page_size`.execute(s.ctx.store.db);
      return Number(pages.rows[0].page_count) * Number(pageSize.rows[0].page_size);
    }
    const r = await sql<{ bytes: string }>`select coalesce(sum(pg_relation_size(c.oid, 'main')), 0) as bytes from pg_class c
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind in ('r', 'i', 't')`.execute(
      s.ctx.store.db,
    );
    return Number(r.rows[0].bytes);
  };

  /**
   * PostgreSQL reuses the space of deleted rows once they are vacuumed. Retention vacuums what it purged;
   * the rest (the job queue's churn, threads the clients deleted, run events their runs' expiry dropped) is
   * autovacuum's, which comes by every minute in a real deployment but not within these simulated days:
   * it is done here, as autovacuum would.
   */
  const autovacuum = async () => {
    if (s.ctx.store.dialect === 'postgres') await sql`VACUUM`.execute(s.ctx.store.db);
  };

  it('row counts and the database size stop growing while traffic goes on', { timeout: 240_000 }, async () => {
    // Keep times of whole days and a half: a row made during day d is never at the edge of its keep time
    // when the sweep runs (after a whole-day move), where a second of real time would decide its fate.
    await admin('POST', '/config', {
      retention: {
        webhook_deliveries: '2d',
        webhook_events: '2d',
        run_events: '1d',
        workload_exchanges: '2d12h',
        image_audit_requests: '2d12h',
      },
    });
    for (const [name, target] of [
      ['good', ok.url],
      ['down', failing.url],
    ])
      await admin('POST', '/projects/proj_demo/webhook_endpoints', { name, url: target, event_types: ['fine_tuning.job.succeeded'] });

    const history: (Record<Table, number> & { day: number; bytes: number })[] = [];
    const threads: string[][] = [];
    for (let day = 1; day <= DAYS; day++) {
      // An event type with no stored object behind it: a triggered `batch.*` event makes a real batch, which is
      // the client's data (kept until deleted) and would grow the database by design.
      for (let i = 0; i < 20; i++) await admin('POST', '/projects/proj_demo/events', { type: 'fine_tuning.job.succeeded' });
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const run = await client.beta.threads.createAndRun({
          assistant_id: 'asst_demo',
          thread: { messages: [{ role: 'user', content: `day ${day}, run ${i}: hello` }] },
        });
        made.push(run.thread_id);
      }
      threads.push(made);
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
            subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
            subject_token: 'not-a-jwt',
            identity_provider_id: 'idp_missing',
            service_account_id: 'svc_acct_missing',
          }),
        });
        expect(res.status).toBe(400);
        await res.body?.cancel();
      }
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${url}/v1/images/request_audit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json' },
          body: JSON.stringify({ image_ids: [`img_${day}_${i}`], reason: 'soak' }),
        });
        expect(res.status, await res.text()).toBeLessThan(300);
      }
      await s.ctx.jobs.drain(60_000);
      // The clients delete their threads after two days (threads are user data: retention leaves them be).
      if (threads.length > 2) for (const id of threads.shift()!) await client.beta.threads.delete(id);
      await admin('POST', '/clock/advance', { duration: '1d' });
      // Retries now due, runs' expiry jobs, and the retention job (due: an hour has passed).
      await s.ctx.jobs.drain(60_000);
      await autovacuum();
      const counts = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(t)]))) as Record<Table, number>;
      history.push({ day, ...counts, bytes: await size() });
    }
    console.log(`retention soak (${dialect}):\n${tableOf(history)}`);

    const last = history[DAYS - 1];
    const settled = history[4];
    const most = (t: Table | 'bytes', from: number, to: number) => Math.max(...history.slice(from - 1, to).map((h) => h[t]));
    // The traffic went on every day: 20 events a day reached the good receiver (at least once each).
    expect(new Set(ok.received.map((r) => r.headers['webhook-id'])).size).toBe(20 * DAYS);
    // Days 6 to 14 hold no more rows than days 3 to 5 did (give or take the deliveries a retry window
    // holds: at least once, a delivery may be made twice).
    for (const t of TABLES) expect(most(t, 6, DAYS), `${t} grew after day 5`).toBeLessThanOrEqual(Math.ceil(most(t, 3, 5) * 1.2));
    // Retention really deleted: far fewer rows are left than were made.
    expect(last.webhook_deliveries).toBeLessThan(40 * DAYS);
    expect(last.workload_exchanges).toBeLessThan(20 * DAYS);
    expect(last.image_audit_requests).toBeLessThan(5 * DAYS);
    const sizes = `sizes by day: ${history.map((h) => h.bytes).join(', ')}`;
    // A day of this traffic while the keep times filled: the steepest average growth between two of days 1 to 5
    // (autovacuum runs when it will: a day may even shrink, and day 1 follows the fresh database's first
    // VACUUM, once measured 48 pages above day 4). Without retention
    // days 6 to 14 would add nine such days; they add at most one (PostgreSQL's indexes and heaps settle over
    // days 5 to 9: the pages freed while the keep times filled are reused once VACUUM has recycled them) ...
    const fill = history.slice(0, 5).map((h) => h.bytes);
    const daily = Math.max(...fill.flatMap((from, i) => fill.slice(i + 1).map((to, k) => (to - from) / (k + 1))));
    expect(daily, sizes).toBeGreaterThan(0);
    expect(last.bytes - settled.bytes, sizes).toBeLessThanOrEqual(daily);
    // ... and over days 11 to 14 the size moves by at most half a day's worth: it has stopped growing (a
    // table without retention would add three days' worth; a relation still moves by a page as inserts and
    // deletes interleave, measured over 30 days in docs/retention.md).
    const lastDays = history.slice(DAYS - 4).map((h) => h.bytes);
    expect(Math.max(...lastDays) - Math.min(...lastDays), sizes).toBeLessThanOrEqual(daily / 2);
    const view = await admin('GET', '/retention');
    expect(view.last_sweep.rules.length).toBeGreaterThan(0);
  });
});

/** A database of its own on the test server (STANDIN_TEST_DATABASE_URL), dropped afterwards. */
async function ownDatabase() {
  const base = process.env.STANDIN_TEST_DATABASE_URL!;
  const name = testSchemaName('soak');
  const run = async (statement: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

function tableOf(rows: Record<string, number>[]): string {
  const cols = Object.keys(rows[0]);
  const line = (vals: (string | number)[]) => vals.map((v) => String(v).padStart(12)).join(' ');
  return [line(cols), ...rows.map((r) => line(cols.map((c) => r[c])))].join('\n');
}
