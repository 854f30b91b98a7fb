import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../../core/module.js';
import { ApiError, forbidden, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { paginate } from '../../core/pagination.js';
import { toJson } from '../../store/db.js';
import { toApiError } from '../../core/validation.js';
import { getOrganization, getProject, getServiceAccount } from '../service.js';
import { ExchangeError, UnsupportedTokenRequest } from './errors.js';
import { parseExchangeRequest, TOKEN_PREFIX, type WorkloadIdentity } from './exchange.js';
import type { MtlsListeners } from './listeners.js';
import * as schemas from './schemas.js';
import * as svc from './service.js';
import * as store from './store.js';

const list = <T extends { id: string }>(data: T[]) => ({ object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });

/** RFC 6749 §5.2 error response; no secret, token or certificate ever goes into it. */
function sendOAuthError(reply: FastifyReply, err: ExchangeError) {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  return reply.code(err.status).send(err.toBody());
}

/** POST /oauth/token, in its own plugin scope: the form body parser exists only here. */
export async function tokenRoutes(app: FastifyInstance, ctx: Ctx, wi: WorkloadIdentity, listeners: MtlsListeners) {
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      const out: Record<string, string> = Object.create(null);
      for (const [k, v] of new URLSearchParams(body as string)) {
        // RFC 6749 §3.2: request parameters must not be included more than once.
        if (k in out) return done(new UnsupportedTokenRequest('duplicate_parameter', `'${k.slice(0, 100)}' is given more than once.`), undefined);
        out[k] = v;
      }
      done(null, out);
    });
    scope.setErrorHandler((error, request, reply) => {
      if (error instanceof ExchangeError) return sendOAuthError(reply, error);
      const api = toApiError(error);
      if (api.status >= 500) request.log.error({ err: error }, 'token endpoint failed');
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const code = api.status >= 500 ? 'server_error' : 'invalid_request';
      return reply.code(api.status).send({ error: code, error_description: api.status >= 500 ? 'The server could not process the token request.' : api.message });
    });
    scope.post(
      '/oauth/token',
      {
        bodyLimit: 64 * 1024,
        schema: {
          tags: ['oauth'],
          summary: 'Token exchange (RFC 8693): a JWT or, on the mutual TLS token endpoint, the client certificate, for an access token.',
          security: [],
        },
      },
      async (request, reply) => {
        const endpoint = listeners.kindOf(request.raw.socket) === 'auth' ? 'mtls' : 'main';
        let parsed;
        try {
          parsed = parseExchangeRequest(request.body, ctx.settings.vendor, endpoint);
        } catch (err) {
          if (err instanceof ExchangeError) {
            await wi.recordUnparsed(err, request.ip);
            return sendOAuthError(reply, err);
          }
          throw err;
        }
        const tls = endpoint === 'mtls' ? { chain: listeners.chainOf(request.raw.socket) } : undefined;
        const response = await wi.exchange(parsed, { tls, clientIp: request.ip });
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        return reply.code(200).send(response);
      },
    );
  });
}

/** The two `/v1` endpoints closed to workload tokens (rule 6), with their normal behaviour for API keys. */
export function v1Routes(app: FastifyInstance, ctx: Ctx) {
  app.delete(
    '/v1/models/:model',
    { schema: { tags: ['models'], summary: 'Delete a fine-tuned model (owner role).', params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 500 }) }) } },
    async (request) => {
      const principal = await ctx.auth.platform(request, { group: 'models', access: 'write' });
      const model = (request.params as { model: string }).model;
      if (principal.serviceAccountId) {
        const sa = await getServiceAccount(ctx.store.db, principal.serviceAccountId);
        if (sa.role !== 'owner') throw forbidden(`Deleting a model needs the 'owner' role; this service account is '${sa.role}'.`, 'insufficient_role');
      }
      const models = ctx.services.models as { has(model: string): boolean } | undefined;
      // Standin trains no models, so no model is a fine-tuned model of this organization.
      if (models?.has(model)) throw forbidden(`The model '${model}' is not a fine-tuned model of your organization; only those can be deleted.`, 'model_not_deletable');
      throw new ApiError('not_found_error', `The model '${model}' does not exist`, { param: 'model', code: 'model_not_found' });
    },
  );

  app.post('/v1/images/request_audit', { schema: { tags: ['images'], summary: 'Request an audit of image generations.', body: schemas.ImageAuditBody } }, async (request, reply) => {
    const principal = await ctx.auth.platform(request, { group: 'images', access: 'write' });
    const body = request.body as { reason: string; image_ids?: string[] };
    const row = {
      id: newId('imgaudit', ctx.clock),
      organization_id: principal.organizationId,
      project_id: principal.projectId,
      credential_id: principal.credentialId,
      reason: body.reason,
      image_ids: toJson(body.image_ids ?? [])!,
      status: 'received',
      created_at: ctx.clock.nowSeconds(),
    };
    await ctx.store.db.insertInto('image_audit_requests').values(row).execute();
    reply.code(201);
    return { id: row.id, object: 'image.audit_request', status: row.status, reason: row.reason, image_ids: body.image_ids ?? [], project_id: row.project_id, created_at: row.created_at };
  });
}

/** Control-plane routes of workload identity under /admin/v1. */
export function adminRoutes(app: FastifyInstance, ctx: Ctx, wi: WorkloadIdentity, listeners: MtlsListeners) {
  const db = ctx.store.db;
  const tags = ['admin: workload identity'];
  const Org = Type.Object({ org_id: Type.String({ maxLength: 200 }) });
  const OrgProvider = Type.Object({ org_id: Type.String({ maxLength: 200 }), provider_id: Type.String({ maxLength: 200 }) });
  const OrgProviderMapping = Type.Object({ org_id: Type.String({ maxLength: 200 }), provider_id: Type.String({ maxLength: 200 }), mapping_id: Type.String({ maxLength: 200 }) });
  const OrgRoot = Type.Object({ org_id: Type.String({ maxLength: 200 }), root_id: Type.String({ maxLength: 200 }) });
  type P = Record<string, string>;
  const org = (req: FastifyRequest) => getOrganization(db, (req.params as P).org_id);
  const provider = async (req: FastifyRequest) => svc.getProvider(db, (await org(req)).id, (req.params as P).provider_id);
  const withMappings = async (p: store.Provider) => ({ ...p, mappings: await store.listMappings(db, p.id) });
  // Cached configuration is dropped again after the commit, so no exchange keeps what the transaction replaced.
  const tx = async <T>(fn: (exec: typeof db) => Promise<T>) => {
    const out = await db.transaction().execute((t) => fn(t as unknown as typeof db));
    wi.invalidate();
    return out;
  };


  app.get('/organizations/:org_id/identity_providers', { schema: { tags, params: Org } }, async (req) => {
    const o = await org(req);
    return list(await Promise.all((await store.listProviders(db, o.id)).map(withMappings)));
  });
  app.post('/organizations/:org_id/identity_providers', { schema: { tags, params: Org, body: schemas.ProviderBody } }, async (req, reply) => {
    const o = await org(req);
    const created = await tx((exec) => svc.upsertProvider(ctx, exec, o.id, req.body as svc.ProviderInput));
    reply.code(201);
    return created;
  });
  app.get('/organizations/:org_id/identity_providers/:provider_id', { schema: { tags, params: OrgProvider } }, async (req) => withMappings(await provider(req)));
  app.post('/organizations/:org_id/identity_providers/:provider_id', { schema: { tags, params: OrgProvider, body: schemas.ProviderUpdateBody } }, async (req) => {
    const p = await provider(req);
    const updated = await tx((exec) => svc.updateProvider(ctx, exec, p.organization_id, p.id, req.body as svc.ProviderPatch));
    wi.jwks.forget(p.id);
    return withMappings(updated);
  });
  app.delete('/organizations/:org_id/identity_providers/:provider_id', { schema: { tags, params: OrgProvider } }, async (req) => {
    const p = await provider(req);
    await tx((exec) => svc.deleteProvider(ctx, exec, p.organization_id, p.id));
    wi.jwks.forget(p.id);
    return { id: p.id, object: 'organization.identity_provider.deleted', deleted: true };
  });

  app.get('/organizations/:org_id/identity_providers/:provider_id/mappings', { schema: { tags, params: OrgProvider } }, async (req) =>
    list(await store.listMappings(db, (await provider(req)).id)),
  );
  app.post('/organizations/:org_id/identity_providers/:provider_id/mappings', { schema: { tags, params: OrgProvider, body: schemas.MappingBody } }, async (req, reply) => {
    const p = await provider(req);
    const m = await tx((exec) => svc.upsertMapping(ctx, exec, p, req.body as svc.MappingInput));
    reply.code(201);
    return m;
  });
  app.get('/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id', { schema: { tags, params: OrgProviderMapping } }, async (req) =>
    svc.getMapping(db, await provider(req), (req.params as P).mapping_id),
  );
  app.post(
    '/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id',
    { schema: { tags, params: OrgProviderMapping, body: schemas.MappingUpdateBody } },
    async (req) => {
      const p = await provider(req);
      return tx((exec) => svc.updateMapping(ctx, exec, p, (req.params as P).mapping_id, req.body as Partial<svc.MappingInput>));
    },
  );
  app.delete('/organizations/:org_id/identity_providers/:provider_id/mappings/:mapping_id', { schema: { tags, params: OrgProviderMapping } }, async (req) => {
    const p = await provider(req);
    const id = (req.params as P).mapping_id;
    await svc.deleteMapping(ctx, db, p, id);
    return { id, object: 'organization.identity_provider.mapping.deleted', deleted: true };
  });

  app.get('/organizations/:org_id/mtls_roots', { schema: { tags, params: Org } }, async (req) => list(await store.listRoots(db, (await org(req)).id)));
  app.post('/organizations/:org_id/mtls_roots', { schema: { tags, params: Org, body: schemas.RootBody } }, async (req, reply) => {
    const o = await org(req);
    const r = await tx((exec) => svc.upsertRoot(ctx, exec, o.id, req.body as svc.RootInput));
    reply.code(201);
    return r;
  });
  app.get('/organizations/:org_id/mtls_roots/:root_id', { schema: { tags, params: OrgRoot } }, async (req) =>
    svc.getRoot(db, (await org(req)).id, (req.params as P).root_id),
  );
  app.post('/organizations/:org_id/mtls_roots/:root_id', { schema: { tags, params: OrgRoot, body: schemas.RootUpdateBody } }, async (req) => {
    const o = await org(req);
    return tx((exec) => svc.updateRoot(ctx, exec, o.id, (req.params as P).root_id, req.body as Parameters<typeof svc.updateRoot>[4]));
  });
  app.post('/organizations/:org_id/mtls_roots/:root_id/retire', { schema: { tags, params: OrgRoot } }, async (req) => {
    const o = await org(req);
    return tx((exec) => svc.updateRoot(ctx, exec, o.id, (req.params as P).root_id, { status: 'retired' }));
  });
  app.delete('/organizations/:org_id/mtls_roots/:root_id', { schema: { tags, params: OrgRoot } }, async (req) => {
    const o = await org(req);
    const id = (req.params as P).root_id;
    await svc.deleteRoot(ctx, db, o.id, id);
    return { id, object: 'organization.mtls_root.deleted', deleted: true };
  });

  const exchanges = async (organizationId: string | null, query: Record<string, unknown>) => {
    let q = db.selectFrom('workload_exchanges').selectAll();
    if (organizationId) q = q.where('organization_id', '=', organizationId);
    if (query.provider_id) q = q.where('provider_id', '=', query.provider_id as string);
    if (query.outcome) q = q.where('outcome', '=', query.outcome as 'issued' | 'refused');
    return paginate(q, 'id', query, { defaultLimit: 20, maxLimit: 100, map: store.toExchange });
  };
  app.get('/organizations/:org_id/workload_identity/exchanges', { schema: { tags, params: Org, querystring: schemas.ExchangesQuery } }, async (req) =>
    exchanges((await org(req)).id, req.query as Record<string, unknown>),
  );
  // Refusals before a provider was resolved belong to no organization; this list has them too.
  app.get('/workload_identity/exchanges', { schema: { tags, querystring: schemas.ExchangesQuery } }, async (req) =>
    exchanges(null, req.query as Record<string, unknown>),
  );

  const ProjectParams = Type.Object({ project_id: Type.String({ maxLength: 200 }) });
  app.get('/projects/:project_id/ip_allowlist', { schema: { tags, params: ProjectParams } }, async (req) => {
    const project = await getProject(db, (req.params as P).project_id);
    return { object: 'project.ip_allowlist', project_id: project.id, cidrs: await store.getAllowlist(db, project.id) };
  });
  app.put('/projects/:project_id/ip_allowlist', { schema: { tags, params: ProjectParams, body: schemas.IpAllowlistBody } }, async (req) =>
    svc.setAllowlist(ctx, db, (req.params as P).project_id, (req.body as { cidrs: string[] }).cidrs),
  );

  app.get('/mtls/server_certificate', { schema: { tags } }, async () => {
    const pem = listeners.serverCertificate();
    if (!pem) throw notFound('mTLS listener', 'server_certificate');
    return { object: 'mtls.server_certificate', certificate: pem };
  });
}
