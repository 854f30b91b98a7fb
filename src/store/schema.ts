/**
 * The database type: one interface per module, joined here. A module reads and writes only its own
 * tables; other modules reach them through its exported service functions.
 */
import type { CoreTables } from '../core/tables.js';
import type { IdentityTables } from '../identity/tables.js';
import type { AdsTables } from '../ads/tables.js';
import type { RateLimitTables } from '../ratelimit/tables.js';
import type { WebhookTables } from '../webhooks/tables.js';
import type { ResponsesTables } from '../responses/tables.js';
import type { SafetyTables } from '../safety/tables.js';
import type { AssistantsTables } from '../assistants/tables.js';
import type { WorkloadTables } from '../identity/workload/tables.js';

export interface DB extends WebhookTables, ResponsesTables, SafetyTables, CoreTables, IdentityTables, AdsTables, RateLimitTables, WorkloadTables, AssistantsTables {}
