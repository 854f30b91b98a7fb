import { adminModule } from '../admin/module.js';
import { adsModule } from '../ads/module.js';
import { coreMigrations } from '../core/tables.js';
import { identityModule } from '../identity/module.js';
import type { Module } from './module.js';

const coreModule: Module = { name: 'core', migrations: coreMigrations };

/** Every feature module, in start order. Add a module with one line here. */
export const modules: Module[] = [
  coreModule,
  adminModule,
  identityModule,
  adsModule,
];
