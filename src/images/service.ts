import type { PlatformPrincipal } from '../core/auth.js';
import { newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import { toJson } from '../store/db.js';
import * as store from './store.js';

/** An audit request of image generations, as `POST /v1/images/request_audit` answers it. */
export interface AuditRequest {
  id: string;
  object: 'image.audit_request';
  status: 'received';
  reason: string;
  image_ids: string[];
  project_id: string;
  created_at: number;
}

/** Records an audit request of the caller's project; Standin keeps it (status `received`) and does no more. */
export async function requestAudit(
  ctx: Ctx,
  principal: PlatformPrincipal,
  input: { reason: string; image_ids?: string[] },
): Promise<AuditRequest> {
  const request: AuditRequest = {
    id: newId('imgaudit', ctx.clock),
    object: 'image.audit_request',
    status: 'received',
    reason: input.reason,
    image_ids: input.image_ids ?? [],
    project_id: principal.projectId,
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertAuditRequest(ctx.store.db, {
    id: request.id,
    organization_id: principal.organizationId,
    project_id: request.project_id,
    credential_id: principal.credentialId,
    reason: request.reason,
    image_ids: toJson(request.image_ids)!,
    status: request.status,
    created_at: request.created_at,
  });
  return request;
}
