import type { Insertable, Selectable, Updateable } from 'kysely';
import type { JSONWebKeySet } from 'jose';
import type { Permissions } from '../../core/auth.js';
import { paginate, type ListPage, type ListParams } from '../../core/pagination.js';
import { fromJson, type Db, type Exec } from '../../store/db.js';
import { groupCommit } from '../../store/group-commit.js';
import type { WorkloadTables } from './tables.js';
import { DEFAULT_ADMISSION, type AdmissionRules } from './x509.js';

/** The SQL of workload identity: rows of its tables and their wire shapes. */
type ProviderRow = Selectable<WorkloadTables['workload_identity_providers']>;
type MappingRow = Selectable<WorkloadTables['workload_identity_mappings']>;
type RootRow = Selectable<WorkloadTables['mtls_roots']>;
type ExchangeRow = Selectable<WorkloadTables['workload_exchanges']>;
export type TokenRow = Selectable<WorkloadTables['workload_tokens']>;
export type NewToken = Insertable<WorkloadTables['workload_tokens']>;
export type NewExchange = Insertable<WorkloadTables['workload_exchanges']>;

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

export const toExchange = (r: ExchangeRow): Exchange => ({
  ...r,
  object: 'organization.workload_identity.exchange',
  created_at: Number(r.created_at),
});

export async function findProvider(exec: Exec, id: string): Promise<Provider | null> {
  const row = await exec.selectFrom('workload_identity_providers').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toProvider(row) : null;
}

export async function findProviderByName(exec: Exec, organizationId: string, name: string): Promise<Provider | null> {
  const row = await exec
    .selectFrom('workload_identity_providers')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toProvider(row) : null;
}

export async function listProviders(exec: Exec, organizationId: string): Promise<Provider[]> {
  return (
    await exec.selectFrom('workload_identity_providers').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute()
  ).map(toProvider);
}

export async function countProviders(exec: Exec, organizationId: string): Promise<number> {
  const r = await exec
    .selectFrom('workload_identity_providers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listMappings(exec: Exec, providerId: string): Promise<Mapping[]> {
  return (
    await exec.selectFrom('workload_identity_mappings').selectAll().where('provider_id', '=', providerId).orderBy('id').execute()
  ).map(toMapping);
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
  return (await exec.selectFrom('mtls_roots').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute()).map(
    toRoot,
  );
}

export async function activeRoots(exec: Exec, organizationId: string): Promise<MtlsRoot[]> {
  const rows = await exec
    .selectFrom('mtls_roots')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('status', '=', 'active')
    .orderBy('id')
    .execute();
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

export async function insertProvider(exec: Exec, row: Insertable<WorkloadTables['workload_identity_providers']>): Promise<void> {
  await exec.insertInto('workload_identity_providers').values(row).execute();
}

export async function updateProvider(
  exec: Exec,
  id: string,
  columns: Updateable<WorkloadTables['workload_identity_providers']>,
): Promise<void> {
  await exec.updateTable('workload_identity_providers').set(columns).where('id', '=', id).execute();
}

/** Deletes a provider and its mappings. */
export async function deleteProvider(exec: Exec, id: string): Promise<void> {
  await exec.deleteFrom('workload_identity_mappings').where('provider_id', '=', id).execute();
  await exec.deleteFrom('workload_identity_providers').where('id', '=', id).execute();
}

/** The provider's mapping with that name, other than `exceptId`. */
export async function findMappingByName(exec: Exec, providerId: string, name: string, exceptId?: string): Promise<Mapping | null> {
  let q = exec.selectFrom('workload_identity_mappings').selectAll().where('provider_id', '=', providerId).where('name', '=', name);
  if (exceptId) q = q.where('id', '!=', exceptId);
  const row = await q.executeTakeFirst();
  return row ? toMapping(row) : null;
}

export async function countMappings(exec: Exec, providerId: string): Promise<number> {
  const r = await exec
    .selectFrom('workload_identity_mappings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('provider_id', '=', providerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertMapping(exec: Exec, row: Insertable<WorkloadTables['workload_identity_mappings']>): Promise<void> {
  await exec.insertInto('workload_identity_mappings').values(row).execute();
}

export async function updateMapping(
  exec: Exec,
  id: string,
  columns: Updateable<WorkloadTables['workload_identity_mappings']>,
): Promise<void> {
  await exec.updateTable('workload_identity_mappings').set(columns).where('id', '=', id).execute();
}

export async function deleteMapping(exec: Exec, id: string): Promise<void> {
  await exec.deleteFrom('workload_identity_mappings').where('id', '=', id).execute();
}

export async function findRootByName(exec: Exec, organizationId: string, name: string): Promise<MtlsRoot | null> {
  const row = await exec
    .selectFrom('mtls_roots')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toRoot(row) : null;
}

export async function countRoots(exec: Exec, organizationId: string): Promise<number> {
  const r = await exec
    .selectFrom('mtls_roots')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertRoot(exec: Exec, row: Insertable<WorkloadTables['mtls_roots']>): Promise<void> {
  await exec.insertInto('mtls_roots').values(row).execute();
}

export async function updateRoot(exec: Exec, id: string, columns: Updateable<WorkloadTables['mtls_roots']>): Promise<void> {
  await exec.updateTable('mtls_roots').set(columns).where('id', '=', id).execute();
}

export async function deleteRoot(exec: Exec, id: string): Promise<void> {
  await exec.deleteFrom('mtls_roots').where('id', '=', id).execute();
}

/** Sets a project's allowlist (one row per project). */
export async function putAllowlist(exec: Exec, row: WorkloadTables['project_ip_allowlists']): Promise<void> {
  const { cidrs, updated_at } = row;
  await exec
    .insertInto('project_ip_allowlists')
    .values(row)
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ cidrs, updated_at }))
    .execute();
}

/** A page of the exchange audit log, newest first by default; `organizationId` null: every organization's. */
/** A token exchange's organization (null: refused before one was known), in any organization. */
export const exchangeOrganization = (exec: Exec, id: string) =>
  exec.selectFrom('workload_exchanges').select(['organization_id']).where('id', '=', id).executeTakeFirst();

export async function listExchanges(
  exec: Exec,
  filter: { organizationId: string | null; providerId?: string; outcome?: 'issued' | 'refused' },
  params: ListParams,
): Promise<ListPage<Exchange>> {
  let q = exec.selectFrom('workload_exchanges').selectAll();
  if (filter.organizationId) q = q.where('organization_id', '=', filter.organizationId);
  if (filter.providerId) q = q.where('provider_id', '=', filter.providerId);
  if (filter.outcome) q = q.where('outcome', '=', filter.outcome);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 100, map: toExchange });
}

export async function findTokenByHash(exec: Exec, hash: string): Promise<TokenRow | null> {
  return (await exec.selectFrom('workload_tokens').selectAll().where('hash', '=', hash).executeTakeFirst()) ?? null;
}

/**
 * Marks every token still good that a provider (or one mapping) minted as revoked at `at` (seconds).
 * Admin changes are rare and tokens leave the table two hours after they were minted at the latest, so
 * the scan needs no index of its own.
 */
export async function revokeTokens(exec: Exec, of: { providerId: string } | { mappingId: string }, at: number): Promise<void> {
  let q = exec.updateTable('workload_tokens').set({ revoked_at: at }).where('revoked_at', 'is', null);
  q = 'providerId' in of ? q.where('provider_id', '=', of.providerId) : q.where('mapping_id', '=', of.mappingId);
  await q.execute();
}

/** Retention: deletes up to `limit` tokens that expired before `expiredBefore` (seconds); returns how many. */
export async function purgeTokens(exec: Exec, expiredBefore: number, limit: number): Promise<number> {
  const ids = exec.selectFrom('workload_tokens').select('id').where('expires_at', '<', expiredBefore).limit(limit);
  const r = await exec.deleteFrom('workload_tokens').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Retention: deletes up to `limit` exchange audit entries made before `before` (seconds); returns how many. */
export async function purgeExchanges(exec: Exec, before: number, limit: number): Promise<number> {
  const ids = exec.selectFrom('workload_exchanges').select('id').where('created_at', '<', before).limit(limit);
  const r = await exec.deleteFrom('workload_exchanges').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Exchange writes under group commit (store/group-commit.ts): the minted token and the audit entry of
 * every exchange finishing in the same turn of the event loop go into one transaction. Each caller still
 * answers only after its rows are committed, so a token is in the store (and usable on every instance)
 * before the client receives it.
 */
export function exchangeWriter(db: () => Db) {
  return groupCommit<{ token: NewToken | null; exchange: NewExchange }>(db, async (tx, items) => {
    const tokens = items.flatMap((i) => (i.token ? [i.token] : []));
    if (tokens.length) await tx.insertInto('workload_tokens').values(tokens).execute();
    await tx
      .insertInto('workload_exchanges')
      .values(items.map((i) => i.exchange))
      .execute();
  });
}
