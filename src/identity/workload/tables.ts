import type { Kysely, Migration } from 'kysely';

/**
 * Tables of workload identity: providers, mappings, mTLS roots, issued tokens, the exchange audit log, IP
 * allowlists. (The first migration also created `image_audit_requests`, whose type lives with the images
 * area now: migrations are frozen, so that table stays created here.)
 */
export interface WorkloadTables {
  workload_identity_providers: {
    id: string;
    organization_id: string;
    name: string;
    kind: 'jwt' | 'x509';
    enabled: number;
    issuer: string | null;
    /** JSON string[] */
    audiences: string | null;
    /** JSON string[] */
    algorithms: string | null;
    jwks_url: string | null;
    /** JSON JWKS */
    jwks_inline: string | null;
    spiffe_trust_domain: string | null;
    attribute_condition: string | null;
    /** JSON Record<string, string> */
    attribute_mapping: string;
    /** Bumped on every change: keys the JWKS and CEL caches. */
    version: number;
    created_at: number;
    updated_at: number;
  };
  workload_identity_mappings: {
    id: string;
    provider_id: string;
    organization_id: string;
    name: string;
    service_account_id: string;
    project_id: string;
    enabled: number;
    /** JSON Record<string, string> */
    attribute_match: string;
    /** JSON Permissions or null */
    permissions: string | null;
    created_at: number;
  };
  mtls_roots: {
    id: string;
    organization_id: string;
    /** Null: active for every project of the organization. */
    project_id: string | null;
    name: string;
    pem: string;
    fingerprint_sha256: string;
    subject: string;
    not_before: number;
    not_after: number;
    status: 'active' | 'retired';
    /** JSON AdmissionRules */
    admission: string;
    created_at: number;
    retired_at: number | null;
  };
  workload_tokens: {
    id: string;
    hash: string;
    organization_id: string;
    project_id: string;
    service_account_id: string;
    provider_id: string;
    mapping_id: string;
    via: 'jwt' | 'x509';
    /** JSON Permissions or null */
    permissions: string | null;
    subject: string;
    /** Seconds, Standin clock. */
    expires_at: number;
    created_at: number;
    /**
     * When disabling or deleting its provider or mapping revoked the token (seconds); null while it is good.
     * Kept on the token, so enabling the mapping again (or re-creating it with the same id) does not revive it.
     */
    revoked_at: number | null;
  };
  workload_exchanges: {
    id: string;
    organization_id: string | null;
    provider_id: string | null;
    mapping_id: string | null;
    service_account_id: string | null;
    subject: string | null;
    via: 'jwt' | 'x509' | null;
    outcome: 'issued' | 'refused';
    error: string | null;
    category: string | null;
    reason: string | null;
    token_id: string | null;
    certificate_sha256: string | null;
    client_ip: string | null;
    created_at: number;
  };
  project_ip_allowlists: {
    project_id: string;
    organization_id: string;
    /** JSON string[] of CIDRs */
    cidrs: string;
    updated_at: number;
  };
}

export const workloadMigrations: Record<string, Migration> = {
  '202611220600_workload_identity_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('workload_identity_providers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('issuer', 'text')
        .addColumn('audiences', 'text')
        .addColumn('algorithms', 'text')
        .addColumn('jwks_url', 'text')
        .addColumn('jwks_inline', 'text')
        .addColumn('spiffe_trust_domain', 'text')
        .addColumn('attribute_condition', 'text')
        .addColumn('attribute_mapping', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('wip_org').on('workload_identity_providers').columns(['organization_id', 'name']).unique().execute();
      await db.schema
        .createTable('workload_identity_mappings')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('provider_id', 'text', (c) => c.notNull().references('workload_identity_providers.id').onDelete('cascade'))
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('service_account_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('attribute_match', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('wim_provider').on('workload_identity_mappings').columns(['provider_id', 'name']).unique().execute();
      await db.schema
        .createTable('mtls_roots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('pem', 'text', (c) => c.notNull())
        .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('not_before', 'bigint', (c) => c.notNull())
        .addColumn('not_after', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('admission', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .execute();
      await db.schema.createIndex('mtls_roots_org').on('mtls_roots').columns(['organization_id', 'status']).execute();
      await db.schema
        .createTable('workload_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('service_account_id', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('mapping_id', 'text', (c) => c.notNull())
        .addColumn('via', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workload_tokens_expiry').on('workload_tokens').columns(['expires_at']).execute();
      await db.schema
        .createTable('workload_exchanges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text')
        .addColumn('provider_id', 'text')
        .addColumn('mapping_id', 'text')
        .addColumn('service_account_id', 'text')
        .addColumn('subject', 'text')
        .addColumn('via', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('category', 'text')
        .addColumn('reason', 'text')
        .addColumn('token_id', 'text')
        .addColumn('certificate_sha256', 'text')
        .addColumn('client_ip', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workload_exchanges_org').on('workload_exchanges').columns(['organization_id', 'id']).execute();
      await db.schema
        .createTable('project_ip_allowlists')
        .addColumn('project_id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('cidrs', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('image_audit_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('credential_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('image_ids', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '202611230600_workload_tokens_revoked': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('workload_tokens').addColumn('revoked_at', 'bigint').execute();
    },
  },
};

declare module '../../store/schema.js' {
  interface DB extends WorkloadTables {}
}
