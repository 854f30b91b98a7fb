import type { Ctx } from '../core/module.js';
import type { Permissions, PlatformPrincipal } from '../core/auth.js';
import { invalid, notFound } from '../core/errors.js';
import { newId, newSecret } from '../core/ids.js';
import { hashSecret, redactSecret } from '../core/secrets.js';
import { fromJson, toJson, type Exec } from '../store/db.js';
import * as store from './store.js';

/** The token endpoint's RFC 6749 §5.2 error reply, for the composition root's error handler under `/oauth/`. */
export { sendOAuthError } from './workload/errors.js';

export interface Organization {
  id: string;
  object: 'organization';
  name: string;
  created_at: number;
}
export interface Project {
  id: string;
  object: 'organization.project';
  organization_id: string;
  name: string;
  created_at: number;
}
export interface ServiceAccount {
  id: string;
  object: 'organization.project.service_account';
  project_id: string;
  name: string;
  role: string;
  created_at: number;
}
export interface ApiKey {
  id: string;
  object: 'organization.project.api_key';
  project_id: string;
  service_account_id: string | null;
  name: string;
  redacted_value: string;
  permissions: Permissions | null;
  created_at: number;
  /** Present only in the response that created the key. */
  value?: string;
}

/** Creates an organization, or returns the existing one with that id (or, without an id, that name). */
export async function upsertOrganization(ctx: Ctx, exec: Exec, input: { id?: string; name: string }): Promise<Organization> {
  const existing = await store.findOrganization(exec, input);
  if (existing) {
    if (existing.name !== input.name) await store.renameOrganization(exec, existing.id, input.name);
    return { id: existing.id, object: 'organization', name: input.name, created_at: existing.created_at };
  }
  const row = { id: input.id ?? newId('org', ctx.clock), name: input.name, created_at: ctx.clock.nowSeconds() };
  await store.insertOrganization(exec, row);
  return { ...row, object: 'organization' };
}

/** Creates a project in an organization, or returns the existing one with that id (or name). */
export async function upsertProject(ctx: Ctx, exec: Exec, organizationId: string, input: { id?: string; name: string }): Promise<Project> {
  const existing = await store.findProject(exec, { id: input.id, organizationId, name: input.name });
  if (existing) {
    if (existing.organization_id !== organizationId) throw invalid(`Project '${existing.id}' belongs to another organization.`, 'id');
    if (existing.name !== input.name) await store.renameProject(exec, existing.id, input.name);
    return {
      id: existing.id,
      object: 'organization.project',
      organization_id: organizationId,
      name: input.name,
      created_at: existing.created_at,
    };
  }
  const row = {
    id: input.id ?? newId('proj', ctx.clock),
    organization_id: organizationId,
    name: input.name,
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertProject(exec, row);
  return { ...row, object: 'organization.project' };
}

export async function getOrganization(exec: Exec, id: string): Promise<Organization> {
  const row = await store.findOrganization(exec, { id });
  if (!row) throw notFound('organization', id);
  return { ...row, object: 'organization' };
}

export async function getProject(exec: Exec, id: string): Promise<Project> {
  const row = await store.findProject(exec, { id });
  if (!row) throw notFound('project', id);
  return { ...row, object: 'organization.project' };
}

export async function listOrganizations(exec: Exec): Promise<Organization[]> {
  return (await store.listOrganizations(exec)).map((r) => ({ ...r, object: 'organization' as const }));
}

export async function listProjects(exec: Exec, organizationId: string): Promise<Project[]> {
  return (await store.listProjects(exec, organizationId)).map((r) => ({ ...r, object: 'organization.project' as const }));
}

const SERVICE_ACCOUNT_ROLES = ['owner', 'member', 'reader'] as const;

/** Creates a service account in a project, or updates the one with that id (or name). */
export async function upsertServiceAccount(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  input: { id?: string; name: string; role?: string },
): Promise<ServiceAccount> {
  const project = await getProject(exec, projectId);
  const role = input.role ?? 'member';
  if (!(SERVICE_ACCOUNT_ROLES as readonly string[]).includes(role)) {
    throw invalid(`'role' must be one of ${SERVICE_ACCOUNT_ROLES.join(', ')}.`, 'role', 'invalid_value');
  }
  const existing = await store.findServiceAccount(exec, { id: input.id, projectId, name: input.name });
  if (existing) {
    if (existing.project_id !== projectId) throw invalid(`Service account '${existing.id}' belongs to another project.`, 'id');
    await store.updateServiceAccount(exec, existing.id, { name: input.name, role });
    return toServiceAccount({ ...existing, name: input.name, role });
  }
  const row = {
    id: input.id ?? newId('svc_acct', ctx.clock),
    organization_id: project.organization_id,
    project_id: projectId,
    name: input.name,
    role,
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertServiceAccount(exec, row);
  return toServiceAccount(row);
}

const toServiceAccount = (r: store.ServiceAccountRow): ServiceAccount => ({
  id: r.id,
  object: 'organization.project.service_account',
  project_id: r.project_id,
  name: r.name,
  role: r.role,
  created_at: r.created_at,
});

/** A service account with its organization (for the rules of other areas: roles, mappings). */
export async function getServiceAccount(exec: Exec, id: string): Promise<ServiceAccount & { organization_id: string }> {
  const row = await store.findServiceAccount(exec, { id });
  if (!row) throw notFound('service account', id);
  return { ...toServiceAccount(row), organization_id: row.organization_id };
}

export async function listServiceAccounts(exec: Exec, projectId: string): Promise<ServiceAccount[]> {
  return (await store.listServiceAccounts(exec, projectId)).map(toServiceAccount);
}

const toApiKey = (r: {
  id: string;
  project_id: string;
  service_account_id: string | null;
  name: string;
  redacted: string;
  permissions: string | null;
  created_at: number;
}): ApiKey => ({
  id: r.id,
  object: 'organization.project.api_key',
  project_id: r.project_id,
  service_account_id: r.service_account_id,
  name: r.name,
  redacted_value: r.redacted,
  permissions: fromJson<Permissions>(r.permissions),
  created_at: r.created_at,
});

/**
 * Adds a platform API key to a project (or to a service account of it). With `value` (a fixed key
 * declared for local use) the key is that value and re-declaring it changes nothing; otherwise a new
 * random key is made and returned once in `value`.
 */
export async function createApiKey(
  ctx: Ctx,
  exec: Exec,
  input: { projectId: string; name: string; value?: string; permissions?: Permissions | null; serviceAccountId?: string | null },
): Promise<ApiKey> {
  ctx.auth.checkPermissions(input.permissions, 'permissions');
  const project = await getProject(exec, input.projectId);
  if (input.serviceAccountId) {
    const sa = await getServiceAccount(exec, input.serviceAccountId);
    if (sa.project_id !== project.id) throw invalid(`Service account '${sa.id}' is not in project '${project.id}'.`, 'service_account_id');
  }
  if (input.value !== undefined && input.value.length < 20)
    throw invalid("A declared key 'value' must be at least 20 characters.", 'value');
  const value = input.value ?? newSecret(input.serviceAccountId ? 'sk-svcacct-' : 'sk-proj-');
  const hash = hashSecret(value);
  const existing = await store.findApiKeyByHash(exec, hash);
  if (existing) {
    if (existing.project_id !== project.id) throw invalid('That key value is already used by another project.', 'value');
    const columns = {
      name: input.name,
      permissions: toJson(input.permissions ?? null),
      service_account_id: input.serviceAccountId ?? null,
    };
    await store.updateApiKey(exec, existing.id, columns);
    // Its permissions may have narrowed: no instance may keep acting on the ones it remembers.
    await ctx.changes.bump(exec, 'credentials');
    ctx.auth.forget();
    return toApiKey({ ...existing, ...columns });
  }
  const row = {
    id: newId('key', ctx.clock),
    organization_id: project.organization_id,
    project_id: project.id,
    service_account_id: input.serviceAccountId ?? null,
    name: input.name,
    hash,
    redacted: redactSecret(value),
    permissions: toJson(input.permissions ?? null),
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertApiKey(exec, row);
  return { ...toApiKey(row), value };
}

export async function listApiKeys(exec: Exec, projectId: string): Promise<ApiKey[]> {
  return (await store.listApiKeys(exec, projectId)).map(toApiKey);
}

/**
 * Deletes a key. Every instance stops taking it once the deletion commits: remembered credentials are
 * dropped here at once, and on the others by the `credentials` change signal.
 */
/** The project of an API key, found by its id alone (the dashboard's search); undefined when none. */
export const locateApiKey = (exec: Exec, id: string) => store.apiKeyProject(exec, id);

export async function deleteApiKey(ctx: Ctx, projectId: string, keyId: string): Promise<void> {
  await ctx.store.db.transaction().execute(async (tx) => {
    if (!(await store.deleteApiKey(tx, projectId, keyId))) throw notFound('API key', keyId);
    await ctx.changes.bump(tx, 'credentials');
  });
  ctx.auth.forget();
}

/** Resolves a platform API key to its principal, or null when no key has that value. */
export async function resolveApiKey(exec: Exec, token: string): Promise<PlatformPrincipal | null> {
  const row = await store.findApiKeyByHash(exec, hashSecret(token));
  if (!row) return null;
  return {
    kind: 'platform',
    organizationId: row.organization_id,
    projectId: row.project_id,
    credentialId: row.id,
    credentialType: row.service_account_id ? 'service_account_key' : 'api_key',
    serviceAccountId: row.service_account_id,
    permissions: fromJson<Permissions>(row.permissions),
  };
}
