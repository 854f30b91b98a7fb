import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Pg from 'pg';
import { applyConfig, readConfigFile } from '../admin/config-file.js';
import { DEMO, seedDemo } from '../admin/seed.js';
import { createAdsKey } from '../ads/accounts.js';
import { DEMO_AD_ACCOUNT } from '../ads/module.js';
import { ApiError } from '../core/errors.js';
import { newSecret } from '../core/ids.js';
import type { Ctx, Module } from '../core/module.js';
import { isLoopback, type Settings } from '../core/settings.js';
import { createApiKey } from '../identity/service.js';
import { exportSnapshotFile, importSnapshot } from '../snapshots/service.js';
import { lazy } from '../store/lazy.js';
import { createStandin, type Standin } from './app.js';
import { modules as defaultModules } from './modules.js';

const pg = lazy<typeof Pg>('pg');

/** The keys of a throwaway Standin: the platform and ads keys are absent with `--no-seed` (no demo project). */
export interface EphemeralKeys {
  admin: string;
  platform?: string;
  ads?: string;
}

/** A Standin on a free port and a fresh store, for one test run. */
export interface Ephemeral {
  url: string;
  keys: EphemeralKeys;
  /** The variables a test command reads (docs/testing.md lists them). */
  env: Record<string, string>;
  standin: Standin;
  /** Writes a snapshot of the whole state to a file (docs/snapshots.md). */
  exportTo(path: string): ReturnType<typeof exportSnapshotFile>;
  /** Stops Standin and deletes its store. */
  close(): Promise<void>;
}

/** What a run starts from besides the settings. */
export interface EphemeralOptions {
  /** A snapshot file: the run starts from its state (keys and all) instead of the demo data. */
  import?: string;
}

/**
 * Starts Standin for a test run: a temporary SQLite folder (or, with a database URL, a new PostgreSQL
 * schema), port 0, the demo seed (or the snapshot of `import`) with keys made for this run, then the
 * config file on top.
 */
export async function startEphemeral(given: Settings, opts: EphemeralOptions = {}): Promise<Ephemeral> {
  // Its keys are generated and handed out, so it stays on this machine (DESIGN: safe by default).
  if (!isLoopback(given.host)) throw new Error(`a throwaway Standin listens on loopback only, not on ${given.host}`);
  if (opts.import !== undefined && !existsSync(opts.import)) throw new Error(`cannot import ${opts.import}: no such file`);
  const store = await freshStore(given.databaseUrl);
  const keys = { platform: newSecret('sk-proj-'), ads: newSecret('sk-ads-') };
  // An imported world is the baseline: no demo seed, on start or on a reset (the run-keys module restores it).
  const settings: Settings = { ...given, port: 0, data: store.data, databaseUrl: store.databaseUrl, seed: given.seed && !opts.import };
  const handed = { platform: false, ads: false };
  let standin: Standin;
  try {
    standin = await createStandin(settings, {
      modules: [...defaultModules, runKeys(keys, { seed: given.seed, config: given.config, fixture: opts.import }, handed)],
    });
  } catch (err) {
    await store.drop();
    throw err;
  }
  let url: string;
  try {
    const { ctx } = standin;
    if (opts.import !== undefined) await importFixture(ctx, opts.import);
    else if (settings.seed) await seedDemo(ctx, standin.modules);
    if (settings.config) await applyConfig(ctx, standin.modules, readConfigFile(settings.config));
    url = await standin.listen();
  } catch (err) {
    await standin.close();
    await store.drop();
    throw err;
  }
  const all: EphemeralKeys = {
    admin: standin.ctx.auth.adminKey(),
    ...(handed.platform ? { platform: keys.platform } : {}),
    ...(handed.ads ? { ads: keys.ads } : {}),
  };
  return {
    url,
    keys: all,
    // The store too, so `standin trigger` (and any command of the command line) run by the command reaches it.
    env: { ...envFor(url, all), STANDIN_DATA: store.data, ...(store.databaseUrl ? { STANDIN_DATABASE_URL: store.databaseUrl } : {}) },
    standin,
    exportTo: (path) => exportSnapshotFile(standin.ctx, path),
    async close() {
      try {
        await standin.close();
      } finally {
        await store.drop();
      }
    },
  };
}

/** Imports the run's snapshot; a file Standin refuses says which file and why. */
async function importFixture(ctx: Ctx, path: string): Promise<void> {
  try {
    await importSnapshot(ctx, path);
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`cannot import ${path}: ${err.message}`);
    throw err;
  }
}

/** The environment of the test command: what the openai SDK reads, and Standin's own names. */
export function envFor(url: string, keys: EphemeralKeys): Record<string, string> {
  const env: Record<string, string> = {
    STANDIN_URL: url,
    STANDIN_ADMIN_KEY: keys.admin,
    OPENAI_BASE_URL: `${url}/v1`,
    STANDIN_ADS_URL: `${url}/ads/v1`,
  };
  if (keys.platform) env.OPENAI_API_KEY = env.STANDIN_PLATFORM_KEY = keys.platform;
  if (keys.ads) env.STANDIN_ADS_KEY = keys.ads;
  return env;
}

/**
 * The run's keys as demo data. A reset empties every table and restores the config file when there is
 * one and the demo seed only when there is none; so this module seeds the demo again on reset (its keys
 * with it), and the keys the command was given keep working after `POST /admin/v1/reset`. A run that
 * started from a snapshot restores that snapshot on reset instead. Any import (the run's own, or one
 * through `POST /admin/v1/snapshot`) gets the keys too, on the demo project and ad account when the
 * imported world has them: the snapshot's own keys come with its rows.
 */
function runKeys(
  keys: { platform: string; ads: string },
  run: { seed: boolean; config?: string; fixture?: string },
  handed: { platform: boolean; ads: boolean },
): Module {
  return {
    name: 'run-keys',
    async seed(ctx, tx, demo) {
      await createApiKey(ctx, tx, { projectId: demo.projectId, name: 'standin exec', value: keys.platform });
      await createAdsKey(ctx, tx, DEMO_AD_ACCOUNT.id!, { name: 'standin exec', value: keys.ads });
      handed.platform = handed.ads = true;
      return [];
    },
    async reset(ctx) {
      // Runs last (after every module cleared its caches); on an import, once the snapshot's rows are in.
      if (ctx.services.snapshots?.importing) {
        if (run.seed) Object.assign(handed, await addKeys(ctx, keys));
      } else if (run.fixture !== undefined) await importSnapshot(ctx, run.fixture);
      else if (run.seed && run.config) await seedDemo(ctx, ctx.modules);
    },
  };
}

/** The run's keys on the demo project and ad account of an imported world, each where its owner exists. */
async function addKeys(ctx: Ctx, keys: { platform: string; ads: string }): Promise<{ platform: boolean; ads: boolean }> {
  const db = ctx.store.db;
  const where = async (make: () => Promise<unknown>) => {
    try {
      await make();
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  };
  return {
    platform: await where(() => createApiKey(ctx, db, { projectId: DEMO.projectId, name: 'standin exec', value: keys.platform })),
    ads: await where(() => createAdsKey(ctx, db, DEMO_AD_ACCOUNT.id!, { name: 'standin exec', value: keys.ads })),
  };
}

/** A fresh store: a temporary folder, and on PostgreSQL a new schema of that database (dropped at the end). */
async function freshStore(databaseUrl: string | undefined) {
  const data = mkdtempSync(join(tmpdir(), 'standin-exec-'));
  const removeFolder = () => rmSync(data, { recursive: true, force: true });
  if (!databaseUrl) return { data, databaseUrl, drop: async () => removeFolder() };
  const schema = `standin_exec_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await onDatabase(databaseUrl, `CREATE SCHEMA ${schema}`);
  const u = new URL(databaseUrl);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    data,
    databaseUrl: u.toString(),
    drop: async () => {
      removeFolder();
      await onDatabase(databaseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}

async function onDatabase(url: string, statement: string): Promise<void> {
  const client = new (pg().Client)({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
