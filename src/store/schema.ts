/**
 * The database type: one interface per module, joined here. A module reads and writes only its own
 * tables; other modules reach them through its exported service functions.
 */
import type { CoreTables } from '../core/tables.js';
import type { IdentityTables } from '../identity/tables.js';
import type { AdsTables } from '../ads/tables.js';

export interface DB extends CoreTables, IdentityTables, AdsTables {}
