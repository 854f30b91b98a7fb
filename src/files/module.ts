import { filesAdminRoutes } from './admin-routes.js';
import { join } from 'node:path';
import type { Module } from '../core/module.js';
import { filesRoutes } from './routes.js';
import { EXPIRE_FILE, expireFile, SWEEP_UPLOAD, sweepUpload, type FilesService } from './service.js';
import { dbStorage } from './storage/db.js';
import { fsStorage } from './storage/fs.js';
import { keepRecent } from './storage/recent.js';
import { filesMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** Where uploaded bytes live, and who hears of a deletion. */
    files: FilesService;
  }
}

/**
 * Files (`/v1/files`): bytes in the data folder with SQLite, in the database with PostgreSQL (every
 * instance reads them), and an in-memory SQLite keeps them in its database too.
 */
export const filesModule: Module = {
  name: 'files',
  migrations: filesMigrations,
  provide(ctx) {
    const onDisk = ctx.store.dialect === 'sqlite' && ctx.settings.data !== ':memory:';
    // On PostgreSQL, the files uploaded last also kept in memory (--recent-files-mb): read back for their ingestion otherwise.
    const recentBytes = ctx.store.dialect === 'postgres' ? Math.max(0, ctx.settings.recentFilesMb) * 1024 * 1024 : 0;
    const inDb = recentBytes > 0 ? keepRecent(dbStorage(ctx.store.db), recentBytes) : dbStorage(ctx.store.db);
    ctx.services.files = { storage: onDisk ? fsStorage(join(ctx.settings.data, 'files')) : inDb, deleted: [] };
  },
  routes: filesRoutes,
  adminRoutes: filesAdminRoutes,
  jobs: (ctx) => [
    { kind: EXPIRE_FILE, concurrency: 4, handler: (payload: { fileId: string }) => expireFile(ctx, payload) },
    { kind: SWEEP_UPLOAD, concurrency: 4, handler: (payload: Parameters<typeof sweepUpload>[1]) => sweepUpload(ctx, payload) },
  ],
  async reset(ctx) {
    await ctx.services.files.storage.clear();
  },
};
