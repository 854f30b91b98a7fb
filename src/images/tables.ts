/**
 * The images area's table: audit requests (`POST /v1/images/request_audit`). The workload identity
 * module's first migration created it (`202611220600_workload_identity_init`); migrations are frozen, so
 * it stays created there, and this area owns its type and its SQL.
 */
export interface ImagesTables {
  image_audit_requests: {
    id: string;
    organization_id: string;
    project_id: string;
    /** The API key or token that asked. */
    credential_id: string;
    reason: string;
    /** JSON string[] */
    image_ids: string;
    status: string;
    created_at: number;
  };
}

declare module '../store/schema.js' {
  interface DB extends ImagesTables {}
}
