import type { Module } from '../core/module.js';
import { snapshotRoutes } from './routes.js';

/** Snapshots: the whole state to one file and back (`standin export`/`import`, `/admin/v1/snapshot`). */
export const snapshotsModule: Module = {
  name: 'snapshots',
  provide(ctx) {
    ctx.services.snapshots = { importing: false };
  },
  adminRoutes: snapshotRoutes,
  commands: {
    export: {
      usage: ['export FILE                            write the whole state (rows, files, clock) to a snapshot file'],
      load: async () => (await import('./cli.js')).runExportCli,
    },
    import: {
      usage: ['import FILE                            replace the whole state with a snapshot file'],
      load: async () => (await import('./cli.js')).runImportCli,
    },
  },
};
