import { sql, type RawBuilder } from 'kysely';
import type pg from 'pg';
import type { Exec } from './db.js';

/**
 * The channel of a deployment's notifications named `name`, as SQL the session evaluates: one per PostgreSQL
 * schema, since deployments on different schemas of one database would otherwise wake each other (a
 * notification reaches every session of the database that listens on its channel). On `public` it is the
 * name itself, as instances of the version before this one name it during a rolling upgrade.
 */
const channelSql = (name: string) =>
  `case when current_schema() = 'public' then ${name} else ${name} || '_' || left(md5(current_schema()), 12) end`;

/** The channel named `name` (a name of Standin's own, not input) as an SQL expression. */
const channelOf = (name: string): RawBuilder<string> => sql.raw(`(${channelSql(`'${name.replace(/'/g, "''")}'::text`)})`);

/** PostgreSQL: notifies this deployment's listeners of `name` (core/bus.ts, jobs, change signals), at the commit of `exec`'s transaction. */
export async function notify(exec: Exec, name: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channelOf(name)}, ${payload})`.execute(exec);
}

export interface Listening {
  /** Settles once the first attempt to listen has ended, listening or not (a failure is retried). */
  ready: Promise<void>;
  stop(): void;
}

/**
 * PostgreSQL: keeps a connection of `pool` LISTENing on this deployment's channel `channel` (its schema's,
 * as `notify` sends to), calling `notified` with each payload.
 * A connection the server ends is dropped from the pool and a new one listens `retryMs` later, as
 * does a failed attempt (one at a time: a stalled database does not collect attempts). While it is down the
 * caller follows by its own poll; `onListen` runs each time listening starts, to catch up on what it missed.
 * The first failure of an outage is logged, not each retry.
 */
export function keepListening(
  pool: pg.Pool,
  channel: string,
  notified: (payload: string) => void,
  opts: { log: { warn(o: unknown, msg: string): void }; onListen?: () => void; retryMs?: number },
): Listening {
  const retryMs = opts.retryMs ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let release: (() => void) | undefined;
  let warned = false;

  const failed = (err: unknown) => {
    if (!warned) opts.log.warn({ err }, `LISTEN ${channel} lost; following by polling until it is back`);
    warned = true;
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void open();
    }, retryMs);
    timer.unref();
  };

  async function open(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      return failed(err);
    }
    let released = false;
    // Closed, never returned to the pool: a connection given back still LISTENing would keep receiving.
    const end = () => {
      if (released) return;
      released = true;
      if (release === end) release = undefined;
      client.off('notification', onNotification);
      client.release(true);
    };
    const onNotification = (n: pg.Notification) => notified(n.payload ?? '');
    client.on('notification', onNotification);
    // A connection lost during the LISTEN both fails the query and emits 'error': the first one counts.
    const lost = (err: Error) => {
      if (released) return;
      end();
      failed(err);
    };
    client.on('error', lost);
    try {
      const named = (await client.query<{ channel: string }>(`select ${channelSql('$1::text')} as channel`, [channel])).rows[0].channel;
      await client.query(`LISTEN ${client.escapeIdentifier(named)}`);
    } catch (err) {
      return lost(err as Error);
    }
    if (stopped) return end();
    release = end;
    warned = false;
    opts.onListen?.();
  }

  return {
    ready: open(),
    stop() {
      stopped = true;
      clearTimeout(timer);
      release?.();
    },
  };
}
