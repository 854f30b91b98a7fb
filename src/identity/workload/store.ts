import type { Selectable } from 'kysely';
import type { JSONWebKeySet } from 'jose';
import type { Permissions } from '../../core/auth.js';
import { fromJson, type Exec } from '../../store/db.js';
import type { WorkloadTables } from './tables.js';
import { DEFAULT_ADMISSION, type AdmissionRules } from './x509.js';

/** Rows of the workload identity tables and their wire shapes. */
type ProviderRow = Selectable<WorkloadTables['workload_identity_providers']>;
type MappingRow = Selectable<WorkloadTables['workload_identity_mappings']>;
type RootRow = Selectable<WorkloadTables['mtls_roots']>;
type ExchangeRow = Selectable<WorkloadTables['workload_exchanges']>;

export interface Provider {
  id: string;
  object: 'organization.identity_provider';
  organization_id: string;
  name: string;
  kind: 'jwt' | 'x509';
  enabled: boolean;
  issuer: string | null;
  audiences: string[] | null;
  algorithms: string[] | null;
  jwks_url: string | null;
  jwks: JSONWebKeySet | null;
  spiffe_trust_domain: string | null;
  attribute_condition: string | null;
  attribute_mapping: Record<string, string>;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface Mapping {
  id: string;
  object: 'organization.identity_provider.mapping';
  provider_id: string;
  name: string;
  service_account_id: string;
  project_id: string;
  enabled: boolean;
  attribute_match: Record<string, string>;
  permissions: Permissions | null;
  created_at: number;
}

export interface MtlsRoot {
  id: string;
  object: 'organization.mtls_root';
  organization_id: string;
  project_id: string | null;
  name: string;
  certificate: string;
  fingerprint_sha256: string;
  subject: string;
  not_before: number;
  not_after: number;
  status: 'active' | 'retired';
  admission: AdmissionRules;
  created_at: number;
  retired_at: number | null;
}

/** An audit entry: the table row, as the admin API shows it. */
export type Exchange = WorkloadTables['workload_exchanges'] & { object: 'organization.workload_identity.exchange' };

export const toProvider = (r: ProviderRow): Provider => ({
  id: r.id,
  object: 'organization.identity_provider',
  organization_id: r.organization_id,
  name: r.name,
  kind: r.kind,
  enabled: Boolean(r.enabled),
  issuer: r.issuer,
  audiences: fromJson<string[]>(r.audiences),
  algorithms: fromJson<string[]>(r.algorithms),
  jwks_url: r.jwks_url,
  jwks: fromJson<JSONWebKeySet>(r.jwks_inline),
  spiffe_trust_domain: r.spiffe_trust_domain,
  attribute_condition: r.attribute_condition,
  attribute_mapping: fromJson<Record<string, string>>(r.attribute_mapping) ?? {},
  version: Number(r.version),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

export const toMapping = (r: MappingRow): Mapping => ({
  id: r.id,
  object: 'organization.identity_provider.mapping',
  provider_id: r.provider_id,
  name: r.name,
  service_account_id: r.service_account_id,
  project_id: r.project_id,
  enabled: Boolean(r.enabled),
  attribute_match: fromJson<Record<string, string>>(r.attribute_match) ?? {},
  permissions: fromJson<Permissions>(r.permissions),
  created_at: Number(r.created_at),
});

export const toRoot = (r: RootRow): MtlsRoot => ({
  id: r.id,
  object: 'organization.mtls_root',
  organization_id: r.organization_id,
  project_id: r.project_id,
  name: r.name,
  certificate: r.pem,
  fingerprint_sha256: r.fingerprint_sha256,
  subject: r.subject,
  not_before: Number(r.not_before),
  not_after: Number(r.not_after),
  status: r.status,
  admission: { ...DEFAULT_ADMISSION, ...(fromJson<Partial<AdmissionRules>>(r.admission) ?? {}) },
  created_at: Number(r.created_at),
  retired_at: r.retired_at === null ? null : Number(r.retired_at),
});

export const toExchange = (r: ExchangeRow): Exchange => ({ ...r, object: 'organization.workload_identity.exchange', created_at: Number(r.created_at) });

export async function findProvider(exec: Exec, id: string): Promise<Provider | null> {
  const row = await exec.selectFrom('workload_identity_providers').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toProvider(row) : null;
}

export async function findProviderByName(exec: Exec, organizationId: string, name: string): Promise<Provider | null> {
  const row = await exec.selectFrom('workload_identity_providers').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
  return row ? toProvider(row) : null;
}

export async function listProviders(exec: Exec, organizationId: string): Promise<Provider[]> {
  return (await exec.selectFrom('workload_identity_providers').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute()).map(toProvider);
}

export async function countProviders(exec: Exec, organizationId: string): Promise<number> {
  const r = await exec.selectFrom('workload_identity_providers').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listMappings(exec: Exec, providerId: string): Promise<Mapping[]> {
  return (await exec.selectFrom('workload_identity_mappings').selectAll().where('provider_id', '=', providerId).orderBy('id').execute()).map(toMapping);
}

/** The provider's mappings for one service account (the only ones an exchange considers). */
export async function mappingsFor(exec: Exec, providerId: string, serviceAccountId: string): Promise<Mapping[]> {
  const rows = await exec
    .selectFrom('workload_identity_mappings')
    .selectAll()
    .where('provider_id', '=', providerId)
    .where('service_account_id', '=', serviceAccountId)
    .orderBy('id')
    .execute();
  return rows.map(toMapping);
}

export async function findMapping(exec: Exec, id: string): Promise<Mapping | null> {
  const row = await exec.selectFrom('workload_identity_mappings').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toMapping(row) : null;
}

export async function listRoots(exec: Exec, organizationId: string): Promise<MtlsRoot[]> {
  return (await exec.selectFrom('mtls_roots').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute()).map(toRoot);
}

export async function activeRoots(exec: Exec, organizationId: string): Promise<MtlsRoot[]> {
  const rows = await exec.selectFrom('mtls_roots').selectAll().where('organization_id', '=', organizationId).where('status', '=', 'active').orderBy('id').execute();
  return rows.map(toRoot);
}

export async function findRoot(exec: Exec, id: string): Promise<MtlsRoot | null> {
  const row = await exec.selectFrom('mtls_roots').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRoot(row) : null;
}

export async function getAllowlist(exec: Exec, projectId: string): Promise<string[]> {
  const row = await exec.selectFrom('project_ip_allowlists').select('cidrs').where('project_id', '=', projectId).executeTakeFirst();
  return row ? (fromJson<string[]>(row.cidrs) ?? []) : [];
}
