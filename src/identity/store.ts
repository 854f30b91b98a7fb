import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Exec } from '../store/db.js';
import type { IdentityTables } from './tables.js';

/** The SQL of organizations, projects, service accounts and API keys (rows as stored). */
export type OrganizationRow = Selectable<IdentityTables['organizations']>;
export type ProjectRow = Selectable<IdentityTables['projects']>;
export type ServiceAccountRow = Selectable<IdentityTables['service_accounts']>;
export type ApiKeyRow = Selectable<IdentityTables['api_keys']>;

/** The organization with that id, or (without an id) that name. */
export async function findOrganization(exec: Exec, by: { id?: string; name?: string }): Promise<OrganizationRow | null> {
  const q = exec.selectFrom('organizations').selectAll();
  return (await (by.id ? q.where('id', '=', by.id) : q.where('name', '=', by.name!)).executeTakeFirst()) ?? null;
}

export async function insertOrganization(exec: Exec, row: Insertable<IdentityTables['organizations']>): Promise<void> {
  await exec.insertInto('organizations').values(row).execute();
}

export async function renameOrganization(exec: Exec, id: string, name: string): Promise<void> {
  await exec.updateTable('organizations').set({ name }).where('id', '=', id).execute();
}

export async function listOrganizations(exec: Exec): Promise<OrganizationRow[]> {
  return exec.selectFrom('organizations').selectAll().orderBy('id').execute();
}

/** The project with that id, or (without an id) the organization's project with that name. */
export async function findProject(exec: Exec, by: { id?: string; organizationId?: string; name?: string }): Promise<ProjectRow | null> {
  const q = exec.selectFrom('projects').selectAll();
  const row = by.id
    ? await q.where('id', '=', by.id).executeTakeFirst()
    : await q.where('organization_id', '=', by.organizationId!).where('name', '=', by.name!).executeTakeFirst();
  return row ?? null;
}

export async function insertProject(exec: Exec, row: Insertable<IdentityTables['projects']>): Promise<void> {
  await exec.insertInto('projects').values(row).execute();
}

export async function renameProject(exec: Exec, id: string, name: string): Promise<void> {
  await exec.updateTable('projects').set({ name }).where('id', '=', id).execute();
}

export async function listProjects(exec: Exec, organizationId: string): Promise<ProjectRow[]> {
  return exec.selectFrom('projects').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute();
}

/** The service account with that id, or (without an id) the project's service account with that name. */
export async function findServiceAccount(
  exec: Exec,
  by: { id?: string; projectId?: string; name?: string },
): Promise<ServiceAccountRow | null> {
  const q = exec.selectFrom('service_accounts').selectAll();
  const row = by.id
    ? await q.where('id', '=', by.id).executeTakeFirst()
    : await q.where('project_id', '=', by.projectId!).where('name', '=', by.name!).executeTakeFirst();
  return row ?? null;
}

export async function insertServiceAccount(exec: Exec, row: Insertable<IdentityTables['service_accounts']>): Promise<void> {
  await exec.insertInto('service_accounts').values(row).execute();
}

export async function updateServiceAccount(exec: Exec, id: string, columns: Updateable<IdentityTables['service_accounts']>): Promise<void> {
  await exec.updateTable('service_accounts').set(columns).where('id', '=', id).execute();
}

export async function listServiceAccounts(exec: Exec, projectId: string): Promise<ServiceAccountRow[]> {
  return exec.selectFrom('service_accounts').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
}

export async function findApiKeyByHash(exec: Exec, hash: string): Promise<ApiKeyRow | null> {
  return (await exec.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst()) ?? null;
}

export async function insertApiKey(exec: Exec, row: Insertable<IdentityTables['api_keys']>): Promise<void> {
  await exec.insertInto('api_keys').values(row).execute();
}

export async function updateApiKey(exec: Exec, id: string, columns: Updateable<IdentityTables['api_keys']>): Promise<void> {
  await exec.updateTable('api_keys').set(columns).where('id', '=', id).execute();
}

/** An API key's project, in any project. */
export async function apiKeyProject(exec: Exec, id: string): Promise<{ project_id: string } | undefined> {
  return exec.selectFrom('api_keys').select(['project_id']).where('id', '=', id).executeTakeFirst();
}

export async function listApiKeys(exec: Exec, projectId: string): Promise<ApiKeyRow[]> {
  return exec.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
}

/** Deletes a project's key; false when the project has no key with that id. */
export async function deleteApiKey(exec: Exec, projectId: string, keyId: string): Promise<boolean> {
  const res = await exec.deleteFrom('api_keys').where('id', '=', keyId).where('project_id', '=', projectId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
