import { adminModule } from '../admin/module.js';
import { adsModule } from '../ads/module.js';
import { appsModule } from '../apps/module.js';
import { coreMigrations } from '../core/tables.js';
import { identityModule } from '../identity/module.js';
import { workloadModule } from '../identity/workload/module.js';
import { rateLimitModule } from '../ratelimit/module.js';
import { webhooksModule } from '../webhooks/module.js';
import { responsesModule } from '../responses/module.js';
import { conversationsModule } from '../conversations/module.js';
import { modelsModule } from '../models/module.js';
import { metricsModule } from '../metrics/module.js';
import { assistantsModule } from '../assistants/module.js';
import { safetyModule } from '../safety/module.js';
import { imagesModule } from '../images/module.js';
import { filesModule } from '../files/module.js';
import { vectorStoresModule } from '../vector-stores/module.js';
import { chatModule } from '../chat/module.js';
import { embeddingsModule } from '../embeddings/module.js';
import { codeInterpreterModule } from '../code-interpreter/module.js';
import { containersModule } from '../containers/module.js';
import { batchesModule } from '../batches/module.js';
import { holdsModule } from '../holds/module.js';
import { retentionModule } from '../retention/module.js';
import { dashboardModule } from '../dashboard/module.js';
import { snapshotsModule } from '../snapshots/module.js';
import type { Module } from '../core/module.js';

const coreModule: Module = { name: 'core', migrations: coreMigrations };

/** Every feature module, in start order. Add a module with one line here. */
export const modules: Module[] = [
  coreModule,
  adminModule,
  rateLimitModule,
  identityModule,
  workloadModule,
  adsModule,
  webhooksModule,
  modelsModule,
  assistantsModule,
  responsesModule,
  conversationsModule,
  safetyModule,
  imagesModule,
  filesModule,
  vectorStoresModule,
  chatModule,
  embeddingsModule,
  codeInterpreterModule,
  containersModule,
  batchesModule,
  holdsModule,
  appsModule,
  retentionModule,
  dashboardModule,
  snapshotsModule,
  metricsModule,
];
