import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createStandin, type Standin } from '../src/server/app.js';
import { readSettings, type Settings } from '../src/core/settings.js';
import { seedDemo } from '../src/admin/seed.js';
import { createApiKey } from '../src/identity/service.js';
import { createAdsKey } from '../src/ads/accounts.js';
import type { Module } from '../src/core/module.js';
import { modules as defaultModules } from '../src/server/modules.js';
import { conformanceModule } from './conformance/validator.js';
import type { DB } from '../src/store/schema.js';

export type TestDialect = 'sqlite' | 'postgres';

/** The dialects a suite runs on: SQLite always, PostgreSQL when STANDIN_TEST_DATABASE_URL is set (CI sets it). */
export function dialects(): TestDialect[] {
  return process.env.STANDIN_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

export const TEST_KEYS = {
  platform: 'sk-proj-test-platform-key-000000000000',
  ads: 'sk-ads-test-ads-key-00000000000000000000',
  admin: 'sk-admin-test-admin-key-0000000000000000',
};

export interface TestStandin extends Standin {
  keys: typeof TEST_KEYS;
  /** `inject` with a bearer: `req('GET', '/ads/v1/…', {key: 'ads'})`. */
  req(
    method: string,
    url: string,
    opts?: { key?: keyof typeof TEST_KEYS | null | string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, any> }>;
  /** Base URL once `listen()` ran. */
  url?: string;
}

/** Test schemas share a prefix, so the next run's global setup can drop them. */
export const TEST_SCHEMA_PREFIX = 'standin_test_';
export const testSchemaName = (kind: string) => `${TEST_SCHEMA_PREFIX}${kind}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

/**
 * A fresh schema in the test database. It is not dropped at close: a DROP while another test process
 * migrates breaks PostgreSQL's catalog scan there; test/global-setup.ts drops earlier runs' schemas.
 */
export async function pgSchema(): Promise<{ url: string }> {
  const base = process.env.STANDIN_TEST_DATABASE_URL!;
  const schema = testSchemaName('t');
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: u.toString(),
  };
}

/**
 * An in-process Standin on a throwaway store: the demo seed plus fixed test keys (TEST_KEYS), workers
 * off unless asked (tests drive them with `ctx.jobs.drain()` or `listen()`).
 */
export async function startTestStandin(
  opts: { dialect?: TestDialect; settings?: Partial<Settings>; modules?: Module[]; seed?: boolean } = {},
): Promise<TestStandin> {
  const dir = mkdtempSync(join(tmpdir(), 'standin-test-'));
  const pgdb = opts.dialect === 'postgres' ? await pgSchema() : undefined;
  const { settings } = readSettings([], {});
  Object.assign(
    settings,
    {
      data: dir,
      port: 0,
      logLevel: 'silent',
      adminKey: TEST_KEYS.admin,
      databaseUrl: pgdb?.url,
      workers: false,
      checkResponses: true,
      // Saved search indexes in the test's own folder on PostgreSQL too (not the user's cache folder).
      searchIndexDir: join(dir, 'search-indexes'),
    },
    opts.settings,
  );
  // Every reply of an operation the platform's official document also has is held against it (test/conformance).
  const standin = await createStandin(settings, { modules: [conformanceModule(), ...(opts.modules ?? defaultModules)], logger: false });
  const { ctx } = standin;
  if (opts.seed !== false) {
    await seedDemo(ctx, standin.modules);
    await createApiKey(ctx, ctx.store.db, { projectId: 'proj_demo', name: 'test', value: TEST_KEYS.platform });
    await createAdsKey(ctx, ctx.store.db, 'adacct_demo', { name: 'test', value: TEST_KEYS.ads });
  }
  const close = standin.close;
  const t: TestStandin = {
    ...standin,
    keys: TEST_KEYS,
    async req(method, url, o = {}) {
      const key = o.key === undefined ? null : o.key === null ? null : ((TEST_KEYS as Record<string, string>)[o.key] ?? o.key);
      const res = await standin.app.inject({
        method: method as any,
        url,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
        payload: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
      });
      let body: any = res.body;
      try {
        body = JSON.parse(res.body);
      } catch {
        /* not JSON */
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
    async listen() {
      t.url = await standin.listen();
      return t.url;
    },
    async close() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** The rows a table holds now. */
export async function countRows(s: Pick<TestStandin, 'ctx'>, table: keyof DB): Promise<number> {
  const r = await s.ctx.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * `work`'s result and the turns the event loop made while it ran: on SQLite statements run on this
 * thread, so work that never leaves the loop a turn between them counts none.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let going = true;
  const tick = () => {
    if (!going) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    going = false;
  }
}
