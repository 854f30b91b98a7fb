import type { Module } from '../core/module.js';
import { containersAdminRoutes } from './admin-routes.js';
import { containersRoutes } from './routes.js';
import { purgeExpiredContainers, purgeExpiredFiles } from './store.js';
import { containersMigrations } from './tables.js';

/**
 * Containers (`/v1/containers…`): sandboxes of the code_interpreter executor with their files, used by the
 * Responses API's code_interpreter tool. Needs the files and code_interpreter modules. Expired containers'
 * files, then the containers themselves, are deleted by retention.
 */
export const containersModule: Module = {
  name: 'containers',
  migrations: containersMigrations,
  routes: containersRoutes,
  adminRoutes: containersAdminRoutes,
  retention: [
    {
      name: 'container_files',
      description: 'Files of expired containers (uploaded, copied or written by code), by when their container expired.',
      tables: ['container_files', 'container_file_parts'],
      defaultMs: 0,
      purge: (tx, cutoffMs, limit) => purgeExpiredFiles(tx, Math.floor(cutoffMs / 1000), limit),
    },
    {
      name: 'expired_containers',
      description: 'Expired containers (still listed, with status `expired`), by when they expired.',
      tables: ['containers', 'container_files', 'container_file_parts'],
      defaultMs: 30 * 86_400_000,
      purge: (tx, cutoffMs, limit) => purgeExpiredContainers(tx, Math.floor(cutoffMs / 1000), limit),
    },
  ],
};
