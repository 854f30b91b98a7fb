import { BlockList, isIP } from 'node:net';
import type { Permissions } from '../../core/auth.js';
import type { Ctx } from '../../core/module.js';
import { ApiError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { toBool, toJson, type Exec } from '../../store/db.js';
import { getProject, getServiceAccount } from '../service.js';
import { checkAttributeMatch, compileExpressions, ExpressionConfigError, loadCel } from './cel.js';
import { JwksError, validateJwks } from './jwks.js';
import { jwksUrlRefusal } from './jwks-url.js';
import { DEFAULT_ALGS } from './jwt.js';
import { LIMITS } from './schemas.js';
import * as store from './store.js';
import type { Mapping, MtlsRoot, Provider } from './store.js';
import { DEFAULT_ADMISSION, describeCertificate, parseRoot, pemToDer, type AdmissionRules } from './x509.js';

/**
 * Configuration of workload identity: providers, their mappings, mTLS roots and project IP allowlists.
 * Shared by the config file and the admin API; every rule lives here, and a refusal names the field.
 */
export interface ProviderInput {
  id?: string;
  kind: 'jwt' | 'x509';
  name: string;
  enabled?: boolean;
  issuer?: string;
  audiences?: string[];
  algorithms?: string[];
  jwks_url?: string;
  jwks?: { keys: Record<string, unknown>[] };
  spiffe_trust_domain?: string;
  attribute_condition?: string;
  attribute_mapping?: Record<string, string>;
  mappings?: MappingInput[];
}
/** Fields of a provider to change; null clears a field (a condition, a trust domain, one key source). */
export type ProviderPatch = { [K in keyof Omit<ProviderInput, 'id' | 'kind' | 'mappings'>]?: ProviderInput[K] | null };

export interface MappingInput {
  id?: string;
  name: string;
  service_account_id: string;
  project_id: string;
  enabled?: boolean;
  attribute_match?: Record<string, string>;
  permissions?: Permissions | null;
}

export interface RootInput {
  id?: string;
  name: string;
  certificate: string;
  project_id?: string | null;
  status?: 'active' | 'retired';
  admission?: Partial<AdmissionRules>;
}

/** Drops this process's cached workload identity configuration after a change. */
function invalidate(ctx: Ctx): void {
  ctx.services.workloadIdentity.identity.invalidate();
}

/**
 * A configuration change, inside its transaction: this process drops its cache now, and every instance
 * (this one included) once the change commits (`ctx.changes`). Changes can revoke tokens, so the
 * credentials every instance remembers are dropped too.
 */
async function touch(ctx: Ctx, exec: Exec): Promise<void> {
  invalidate(ctx);
  await ctx.changes.bump(exec, WORKLOAD_CONCERN);
  await ctx.changes.bump(exec, 'credentials');
}

/** The concern of `ctx.changes` that every change of providers, mappings, roots and allowlists bumps. */
export const WORKLOAD_CONCERN = 'workload_identity';

/**
 * Runs a configuration change in one transaction, then drops the cached configuration again: an exchange
 * between the change and the commit may have cached what the transaction replaced.
 */
export async function changeConfig<T>(ctx: Ctx, change: (tx: Exec) => Promise<T>): Promise<T> {
  const out = await ctx.store.db.transaction().execute(change);
  invalidate(ctx);
  return out;
}

/** A provider with its mappings, as every provider reply shows it. */
export async function withMappings(exec: Exec, provider: Provider): Promise<Provider & { mappings: Mapping[] }> {
  return { ...provider, mappings: await store.listMappings(exec, provider.id) };
}

/** The organization's providers, each with its mappings. */
export async function listProviders(exec: Exec, organizationId: string): Promise<(Provider & { mappings: Mapping[] })[]> {
  return Promise.all((await store.listProviders(exec, organizationId)).map((p) => withMappings(exec, p)));
}

export const listMappings = (exec: Exec, providerId: string): Promise<Mapping[]> => store.listMappings(exec, providerId);
export const listRoots = (exec: Exec, organizationId: string): Promise<MtlsRoot[]> => store.listRoots(exec, organizationId);
export const getAllowlist = (exec: Exec, projectId: string): Promise<string[]> => store.getAllowlist(exec, projectId);
/** A page of the exchange audit log (`organizationId` null: every organization's, and refusals before a provider was known). */
export const listExchanges = store.listExchanges;
/** The organization of a token exchange, found by its id alone (the dashboard's search); undefined when none. */
export const locateExchange = store.exchangeOrganization;

const JWT_ONLY = ['issuer', 'audiences', 'algorithms', 'jwks_url', 'jwks', 'spiffe_trust_domain'] as const;

/** The default subject of each kind: the JWT's `sub`, or the certificate's subject CN. */
export const defaultMapping = (kind: 'jwt' | 'x509', vendor: string) => ({
  [`${vendor}.subject`]: kind === 'jwt' ? 'assertion.sub' : 'assertion.subject.dn.cn',
});

function checkProvider(
  ctx: Ctx,
  p: Omit<Provider, 'id' | 'object' | 'organization_id' | 'version' | 'created_at' | 'updated_at'>,
  prefix = '',
): void {
  if (p.kind === 'jwt') {
    if (!p.issuer) throw invalid(`'${prefix}issuer' is required for a jwt provider.`, `${prefix}issuer`);
    if (!p.audiences?.length)
      throw invalid(`'${prefix}audiences' must list at least one audience for a jwt provider.`, `${prefix}audiences`);
    if (Boolean(p.jwks_url) === Boolean(p.jwks))
      throw invalid(`A jwt provider needs exactly one of '${prefix}jwks_url' or '${prefix}jwks'.`, `${prefix}jwks_url`);
    if (p.jwks) {
      try {
        validateJwks(p.jwks);
      } catch (err) {
        throw invalid(`'${prefix}jwks': ${(err as JwksError).message}.`, `${prefix}jwks`);
      }
    }
    if (p.jwks_url) {
      let u: URL;
      try {
        u = new URL(p.jwks_url);
      } catch {
        throw invalid(`'${prefix}jwks_url' must be an absolute http(s) URL.`, `${prefix}jwks_url`);
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:')
        throw invalid(`'${prefix}jwks_url' must be an absolute http(s) URL.`, `${prefix}jwks_url`);
      if (u.username || u.password) throw invalid(`'${prefix}jwks_url' must not carry credentials.`, `${prefix}jwks_url`);
    }
  } else {
    for (const f of JWT_ONLY) {
      if (p[f] != null)
        throw invalid(
          `'${prefix}${f}' applies to jwt providers only; an x509 provider uses the organization's active mTLS roots.`,
          `${prefix}${f}`,
        );
    }
  }
  try {
    compileExpressions({ attribute_condition: p.attribute_condition, attribute_mapping: p.attribute_mapping }, ctx.settings.vendor, prefix);
  } catch (err) {
    if (err instanceof ExpressionConfigError) throw invalid(err.message, err.param);
    throw err;
  }
}

/** Creates a provider (or updates the one with that id, or that name) with its mappings. */
export async function upsertProvider(
  ctx: Ctx,
  exec: Exec,
  organizationId: string,
  input: ProviderInput,
): Promise<Provider & { mappings: Mapping[] }> {
  await loadCel();
  const existing = input.id ? await store.findProvider(exec, input.id) : await store.findProviderByName(exec, organizationId, input.name);
  if (existing && existing.organization_id !== organizationId)
    throw invalid(`Identity provider '${existing.id}' belongs to another organization.`, 'id');
  if (existing && existing.kind !== input.kind)
    throw invalid(`'kind' of identity provider '${existing.id}' cannot change (it is '${existing.kind}').`, 'kind');
  const fields = {
    kind: input.kind,
    name: input.name,
    enabled: input.enabled ?? true,
    issuer: input.issuer ?? null,
    audiences: input.audiences ?? null,
    algorithms: input.kind === 'jwt' ? (input.algorithms ?? DEFAULT_ALGS) : (input.algorithms ?? null),
    jwks_url: input.jwks_url ?? null,
    jwks: (input.jwks as Provider['jwks']) ?? null,
    spiffe_trust_domain: input.spiffe_trust_domain ?? null,
    attribute_condition: input.attribute_condition ?? null,
    attribute_mapping: input.attribute_mapping ?? defaultMapping(input.kind, ctx.settings.vendor),
  };
  checkProvider(ctx, fields);
  // A new or changed key URL must be one the outbound guard lets Standin fetch (judged again at every fetch).
  if (fields.jwks_url && fields.jwks_url !== existing?.jwks_url) {
    const refusal = await jwksUrlRefusal(ctx, new URL(fields.jwks_url));
    if (refusal)
      throw invalid(`'jwks_url' is refused by the outbound guard: ${refusal} (--outbound-allow).`, 'jwks_url', 'jwks_url_refused');
  }
  if (input.mappings && input.mappings.length > LIMITS.mappingsPerProvider) {
    throw invalid(`An identity provider may have at most ${LIMITS.mappingsPerProvider} mappings.`, 'mappings', 'limit_exceeded');
  }
  const now = ctx.clock.nowSeconds();
  const columns = {
    name: fields.name,
    kind: fields.kind,
    enabled: toBool(fields.enabled),
    issuer: fields.issuer,
    audiences: toJson(fields.audiences),
    algorithms: toJson(fields.algorithms),
    jwks_url: fields.jwks_url,
    jwks_inline: toJson(fields.jwks),
    spiffe_trust_domain: fields.spiffe_trust_domain,
    attribute_condition: fields.attribute_condition,
    attribute_mapping: toJson(fields.attribute_mapping)!,
    updated_at: now,
  };
  let id: string;
  if (existing) {
    id = existing.id;
    const clash = await store.findProviderByName(exec, organizationId, input.name);
    if (clash && clash.id !== id) throw invalid(`An identity provider named '${input.name}' exists.`, 'name');
    const unchanged = sameProvider(existing, fields);
    if (!unchanged) {
      await store.updateProvider(exec, id, { ...columns, version: existing.version + 1 });
      // The key cache is keyed by version: the old version's set is of no further use.
      ctx.services.workloadIdentity.identity.jwks.forget(id);
    }
    // Disabling revokes what the provider minted, for good: enabling it again revives none of it (and
    // revoking on enable too catches a token whose exchange was under way when it was disabled).
    if (existing.enabled !== fields.enabled) await store.revokeTokens(exec, { providerId: id }, now);
  } else {
    if ((await store.countProviders(exec, organizationId)) >= LIMITS.providersPerOrganization) {
      throw limit(`An organization may have at most ${LIMITS.providersPerOrganization} workload identity providers.`);
    }
    id = input.id ?? newId('idp', ctx.clock);
    if (input.name && (await store.findProviderByName(exec, organizationId, input.name)))
      throw invalid(`An identity provider named '${input.name}' exists.`, 'name');
    await store.insertProvider(exec, { id, organization_id: organizationId, ...columns, version: 1, created_at: now });
    // Tokens of an earlier provider with this id (deleted while one of its exchanges was under way) stay dead.
    await store.revokeTokens(exec, { providerId: id }, now);
  }
  await touch(ctx, exec);
  const provider = (await store.findProvider(exec, id))!;
  for (const [i, m] of (input.mappings ?? []).entries()) await upsertMapping(ctx, exec, provider, m, `mappings[${i}].`);
  return { ...provider, mappings: await store.listMappings(exec, id) };
}

function sameProvider(existing: Provider, next: Record<string, unknown>): boolean {
  return Object.entries(next).every(
    ([k, v]) => JSON.stringify((existing as unknown as Record<string, unknown>)[k] ?? null) === JSON.stringify(v ?? null),
  );
}

const limit = (message: string) => new ApiError('invalid_request_error', message, { code: 'limit_exceeded' });

/** Changes some fields of a provider; the kind never changes. */
export async function updateProvider(
  ctx: Ctx,
  exec: Exec,
  organizationId: string,
  providerId: string,
  patch: ProviderPatch,
): Promise<Provider> {
  const p = await getProvider(exec, organizationId, providerId);
  const merged = { ...p, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as Provider;
  await upsertProvider(ctx, exec, organizationId, {
    id: p.id,
    kind: p.kind,
    name: merged.name,
    enabled: merged.enabled,
    issuer: merged.issuer ?? undefined,
    audiences: merged.audiences ?? undefined,
    algorithms: merged.algorithms ?? undefined,
    jwks_url: merged.jwks_url ?? undefined,
    jwks: (merged.jwks as ProviderInput['jwks']) ?? undefined,
    spiffe_trust_domain: merged.spiffe_trust_domain ?? undefined,
    attribute_condition: merged.attribute_condition ?? undefined,
    attribute_mapping: merged.attribute_mapping,
  });
  return getProvider(exec, organizationId, providerId);
}

export async function getProvider(exec: Exec, organizationId: string, providerId: string): Promise<Provider> {
  const p = await store.findProvider(exec, providerId);
  if (!p || p.organization_id !== organizationId) throw notFound('identity provider', providerId);
  return p;
}

/** Deletes a provider and its mappings, and revokes every token they minted. */
export async function deleteProvider(ctx: Ctx, exec: Exec, organizationId: string, providerId: string): Promise<void> {
  await getProvider(exec, organizationId, providerId);
  await touch(ctx, exec);
  ctx.services.workloadIdentity.identity.jwks.forget(providerId);
  await store.revokeTokens(exec, { providerId }, ctx.clock.nowSeconds());
  await store.deleteProvider(exec, providerId);
}

async function checkMappingTarget(
  exec: Exec,
  organizationId: string,
  m: { project_id: string; service_account_id: string },
  prefix: string,
) {
  const project = await getProject(exec, m.project_id).catch(() => null);
  if (!project || project.organization_id !== organizationId)
    throw invalid(`'${prefix}project_id': no project '${m.project_id}' in this organization.`, `${prefix}project_id`);
  const sa = await getServiceAccount(exec, m.service_account_id).catch(() => null);
  if (!sa || sa.project_id !== project.id) {
    throw invalid(
      `'${prefix}service_account_id': no service account '${m.service_account_id}' in project '${project.id}'.`,
      `${prefix}service_account_id`,
    );
  }
}

function checkMatch(ctx: Ctx, match: Record<string, string> | undefined, prefix: string) {
  try {
    checkAttributeMatch(match ?? {}, ctx.settings.vendor, `${prefix}attribute_match`);
  } catch (err) {
    if (err instanceof ExpressionConfigError) throw invalid(err.message, err.param);
    throw err;
  }
}

/** Creates a mapping of a provider (or updates the one with that id, or that name). */
export async function upsertMapping(ctx: Ctx, exec: Exec, provider: Provider, input: MappingInput, prefix = ''): Promise<Mapping> {
  await checkMappingTarget(exec, provider.organization_id, input, prefix);
  checkMatch(ctx, input.attribute_match, prefix);
  ctx.auth.checkPermissions(input.permissions, `${prefix}permissions`);
  const existing = input.id ? await store.findMapping(exec, input.id) : await store.findMappingByName(exec, provider.id, input.name);
  if (existing && existing.provider_id !== provider.id)
    throw invalid(`Mapping '${existing.id}' belongs to another identity provider.`, `${prefix}id`);
  const columns = {
    name: input.name,
    service_account_id: input.service_account_id,
    project_id: input.project_id,
    enabled: toBool(input.enabled ?? true),
    attribute_match: toJson(input.attribute_match ?? {})!,
    permissions: toJson(input.permissions ?? null),
  };
  await touch(ctx, exec);
  const now = ctx.clock.nowSeconds();
  if (existing) {
    if (await store.findMappingByName(exec, provider.id, input.name, existing.id))
      throw invalid(`A mapping named '${input.name}' exists for this provider.`, `${prefix}name`);
    await store.updateMapping(exec, existing.id, columns);
    // Disabling the mapping, or pointing it at another service account or project, revokes its tokens for
    // good (on enable too: a token whose exchange was under way when the mapping was disabled).
    const moved = existing.service_account_id !== columns.service_account_id || existing.project_id !== columns.project_id;
    if (moved || existing.enabled !== Boolean(columns.enabled)) await store.revokeTokens(exec, { mappingId: existing.id }, now);
    return (await store.findMapping(exec, existing.id))!;
  }
  if ((await store.countMappings(exec, provider.id)) >= LIMITS.mappingsPerProvider)
    throw limit(`An identity provider may have at most ${LIMITS.mappingsPerProvider} mappings.`);
  const id = input.id ?? newId('idpmap', ctx.clock);
  await store.insertMapping(exec, { id, provider_id: provider.id, organization_id: provider.organization_id, ...columns, created_at: now });
  // Tokens of an earlier mapping with this id (deleted while one of its exchanges was under way) stay dead.
  await store.revokeTokens(exec, { mappingId: id }, now);
  return (await store.findMapping(exec, id))!;
}

export async function getMapping(exec: Exec, provider: Provider, mappingId: string): Promise<Mapping> {
  const m = await store.findMapping(exec, mappingId);
  if (!m || m.provider_id !== provider.id) throw notFound('mapping', mappingId);
  return m;
}

export async function updateMapping(
  ctx: Ctx,
  exec: Exec,
  provider: Provider,
  mappingId: string,
  patch: Partial<MappingInput>,
): Promise<Mapping> {
  const m = await getMapping(exec, provider, mappingId);
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return upsertMapping(ctx, exec, provider, { ...m, ...defined, id: m.id } as MappingInput);
}

/** Deletes a mapping and revokes every token it minted (re-creating it with the same id revives none). */
export async function deleteMapping(ctx: Ctx, exec: Exec, provider: Provider, mappingId: string): Promise<void> {
  await getMapping(exec, provider, mappingId);
  await touch(ctx, exec);
  await store.revokeTokens(exec, { mappingId }, ctx.clock.nowSeconds());
  await store.deleteMapping(exec, mappingId);
}

/** Adds an mTLS root (or updates the one with that id, or that name). Takes effect on the next exchange. */
export async function upsertRoot(ctx: Ctx, exec: Exec, organizationId: string, input: RootInput): Promise<MtlsRoot> {
  let der: Buffer;
  try {
    der = pemToDer(input.certificate);
    parseRoot({ id: 'check', pem: input.certificate, projectId: null, admission: DEFAULT_ADMISSION });
  } catch (err) {
    throw invalid(`'certificate' must be one PEM CA certificate: ${(err as Error).message}.`, 'certificate');
  }
  if (input.project_id) {
    const project = await getProject(exec, input.project_id).catch(() => null);
    if (!project || project.organization_id !== organizationId)
      throw invalid(`'project_id': no project '${input.project_id}' in this organization.`, 'project_id');
  }
  const info = describeCertificate(der);
  const admission = { ...DEFAULT_ADMISSION, ...(input.admission ?? {}) };
  const now = ctx.clock.nowSeconds();
  const existing = input.id ? await store.findRoot(exec, input.id) : await store.findRootByName(exec, organizationId, input.name);
  if (existing && existing.organization_id !== organizationId)
    throw invalid(`mTLS root '${existing.id}' belongs to another organization.`, 'id');
  const status = input.status ?? 'active';
  await touch(ctx, exec);
  const columns = {
    name: input.name,
    project_id: input.project_id ?? null,
    pem: input.certificate.trim() + '\n',
    fingerprint_sha256: info.fingerprint_sha256,
    subject: info.subject,
    not_before: info.not_before,
    not_after: info.not_after,
    status,
    admission: toJson(admission)!,
  };
  if (existing) {
    const retiredAt = status === 'retired' ? (existing.retired_at ?? now) : null;
    await store.updateRoot(exec, existing.id, { ...columns, retired_at: retiredAt });
    return (await store.findRoot(exec, existing.id))!;
  }
  if ((await store.countRoots(exec, organizationId)) >= LIMITS.rootsPerOrganization)
    throw limit(`An organization may have at most ${LIMITS.rootsPerOrganization} mTLS roots.`);
  const id = input.id ?? newId('mtlsroot', ctx.clock);
  await store.insertRoot(exec, {
    id,
    organization_id: organizationId,
    ...columns,
    created_at: now,
    retired_at: status === 'retired' ? now : null,
  });
  return (await store.findRoot(exec, id))!;
}

export async function getRoot(exec: Exec, organizationId: string, rootId: string): Promise<MtlsRoot> {
  const r = await store.findRoot(exec, rootId);
  if (!r || r.organization_id !== organizationId) throw notFound('mTLS root', rootId);
  return r;
}

export async function updateRoot(
  ctx: Ctx,
  exec: Exec,
  organizationId: string,
  rootId: string,
  patch: Partial<Omit<RootInput, 'id' | 'certificate'>>,
): Promise<MtlsRoot> {
  const r = await getRoot(exec, organizationId, rootId);
  return upsertRoot(ctx, exec, organizationId, {
    id: r.id,
    name: patch.name ?? r.name,
    certificate: r.certificate,
    project_id: patch.project_id === undefined ? r.project_id : patch.project_id,
    status: patch.status ?? r.status,
    admission: patch.admission ? { ...r.admission, ...patch.admission } : r.admission,
  });
}

export async function deleteRoot(ctx: Ctx, exec: Exec, organizationId: string, rootId: string): Promise<void> {
  await getRoot(exec, organizationId, rootId);
  await touch(ctx, exec);
  await store.deleteRoot(exec, rootId);
}

/** Parses an allowlist entry (an address or a CIDR); returns [network, prefix, family] or null. */
export function parseCidr(entry: string): [string, number, 'ipv4' | 'ipv6'] | null {
  const [addr, bits, extra] = entry.trim().split('/');
  if (extra !== undefined) return null;
  const family = isIP(addr);
  if (!family) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return [addr, prefix, family === 4 ? 'ipv4' : 'ipv6'];
}

/** Sets a project's IP allowlist (empty: no restriction). */
export async function setAllowlist(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  cidrs: string[],
): Promise<{ object: 'project.ip_allowlist'; project_id: string; cidrs: string[] }> {
  const project = await getProject(exec, projectId);
  if (cidrs.length > LIMITS.cidrsPerProject) throw limit(`A project's IP allowlist may hold at most ${LIMITS.cidrsPerProject} entries.`);
  cidrs.forEach((c, i) => {
    if (!parseCidr(c)) throw invalid(`'cidrs[${i}]' must be an IP address or a CIDR such as 203.0.113.0/24.`, `cidrs[${i}]`);
  });
  const normalized = cidrs.map((c) => c.trim());
  await store.putAllowlist(exec, {
    project_id: project.id,
    organization_id: project.organization_id,
    cidrs: toJson(normalized)!,
    updated_at: ctx.clock.nowSeconds(),
  });
  await ctx.changes.bump(exec, WORKLOAD_CONCERN);
  ctx.services.workloadIdentity.allowlists.delete(project.id);
  return { object: 'project.ip_allowlist', project_id: project.id, cidrs: normalized };
}

/** A BlockList of the entries (for matching request addresses). */
export function allowlistOf(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const parsed = parseCidr(c);
    if (parsed) list.addSubnet(parsed[0], parsed[1], parsed[2]);
  }
  return list;
}
