import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import { invalid, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Exec } from '../store/db.js';
import * as store from './store.js';

/**
 * Safety cases and alerts. The spec names the endpoints and the events but not the shapes; Standin's
 * objects carry what a receiver needs to act: who (safety identifier), what (category, action), when.
 */
export interface SafetyCase {
  id: string;
  object: 'safety.case';
  /** `warning` (safety.warning_issued) or `deactivation` (safety.deactivation_issued). */
  action: 'warning' | 'deactivation';
  organization_id: string;
  project_id: string;
  safety_identifier: string;
  category: string;
  description: string;
  status: 'open';
  created_at: number;
  /** For a deactivation: when access for the identifier ends (Unix seconds). */
  effective_at: number | null;
}

export interface SafetyAlert {
  id: string;
  object: 'safety.alert';
  /** `project` (safety.alert.created) or `organization` (safety.org_alert.created, an enterprise workspace). */
  scope: 'project' | 'organization';
  organization_id: string;
  project_id: string | null;
  category: string;
  severity: 'low' | 'medium' | 'high';
  summary: string;
  status: 'approved';
  created_at: number;
}

export const SAFETY_CATEGORIES = ['harassment', 'hate', 'self-harm', 'sexual/minors', 'violence', 'illicit', 'fraud', 'malware'] as const;

const pick = <T>(list: readonly T[]) => list[randomBytes(1)[0] % list.length];

/** Records a case (realistic defaults for what the caller leaves out). */
export async function createCase(
  ctx: Ctx,
  exec: Exec,
  input: {
    organizationId: string;
    projectId: string;
    action: 'warning' | 'deactivation';
    safety_identifier?: string;
    category?: string;
    description?: string;
  },
): Promise<SafetyCase> {
  const now = ctx.clock.nowSeconds();
  const category = input.category ?? pick(SAFETY_CATEGORIES);
  if (input.category !== undefined && (typeof input.category !== 'string' || input.category.length > 64))
    throw invalid(`'category' must be a string of at most 64 characters.`, 'category');
  const c: SafetyCase = {
    id: newId('safety_case', ctx.clock),
    object: 'safety.case',
    action: input.action,
    organization_id: input.organizationId,
    project_id: input.projectId,
    safety_identifier: input.safety_identifier ?? `user_${randomBytes(6).toString('hex')}`,
    category,
    description:
      input.description ??
      (input.action === 'warning'
        ? `Requests associated with this safety identifier were flagged for ${category} content. Repeated violations lead to deactivation.`
        : `Access for this safety identifier is deactivated after repeated ${category} violations.`),
    status: 'open',
    created_at: now,
    effective_at: input.action === 'deactivation' ? now + 86400 : null,
  };
  await store.insertCase(exec, {
    id: c.id,
    organization_id: c.organization_id,
    project_id: c.project_id,
    payload: JSON.stringify(c),
    created_at: now,
  });
  return c;
}

/** Records an approved alert for a project, or for the whole organization (`projectId` null). */
export async function createAlert(
  ctx: Ctx,
  exec: Exec,
  input: { organizationId: string; projectId: string | null; category?: string; severity?: 'low' | 'medium' | 'high'; summary?: string },
): Promise<SafetyAlert> {
  const now = ctx.clock.nowSeconds();
  const category = input.category ?? pick(SAFETY_CATEGORIES);
  const a: SafetyAlert = {
    id: newId('safety_alert', ctx.clock),
    object: 'safety.alert',
    scope: input.projectId ? 'project' : 'organization',
    organization_id: input.organizationId,
    project_id: input.projectId,
    category,
    severity: input.severity ?? 'medium',
    summary:
      input.summary ??
      `Elevated ${category} activity was detected in traffic ${input.projectId ? 'of this project' : 'across the workspace'}; review the flagged requests.`,
    status: 'approved',
    created_at: now,
  };
  await store.insertAlert(exec, {
    id: a.id,
    organization_id: a.organization_id,
    project_id: a.project_id,
    payload: JSON.stringify(a),
    created_at: now,
  });
  return a;
}

/** A case visible to the caller: any project of the case's organization may read it. */
export async function getCase(exec: Exec, organizationId: string, id: string): Promise<SafetyCase> {
  const payload = await store.findCase(exec, organizationId, id);
  if (payload === null) throw notFound('safety case', id);
  return JSON.parse(payload) as SafetyCase;
}

/** An alert visible to the caller: its own project's alerts and its organization's workspace alerts. */
export async function getAlert(exec: Exec, organizationId: string, projectId: string, id: string): Promise<SafetyAlert> {
  const row = await store.findAlert(exec, organizationId, id);
  if (!row || (row.project_id !== null && row.project_id !== projectId)) throw notFound('safety alert', id);
  return JSON.parse(row.payload) as SafetyAlert;
}
